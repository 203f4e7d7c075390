/// A value kept behind a reference that is shared by copies until one of them changes it: a
/// large, rarely changed part of a value type then costs one reference to copy or move.
///
/// Thread-safe as values are: the storage is only ever mutated through a uniquely referenced box,
/// so a box that two copies share is never written.
struct CopyOnWrite<Value: Sendable & Hashable>: Sendable, Hashable {
    /// `@unchecked Sendable` is sound: `value` is written only through `value`'s `_modify`, after
    /// `isKnownUniquelyReferenced` has made this copy the box's only owner.
    private final class Box: @unchecked Sendable {
        var value: Value
        init(_ value: Value) { self.value = value }
    }

    private var box: Box

    init(_ value: Value) { box = Box(value) }

    /// The value; changing it first copies the storage if another copy shares it.
    var value: Value {
        get { box.value }
        _modify {
            if !isKnownUniquelyReferenced(&box) { box = Box(box.value) }
            yield &box.value
        }
    }

    static func == (lhs: CopyOnWrite, rhs: CopyOnWrite) -> Bool { lhs.box === rhs.box || lhs.box.value == rhs.box.value }
    func hash(into hasher: inout Hasher) { hasher.combine(box.value) }
}
