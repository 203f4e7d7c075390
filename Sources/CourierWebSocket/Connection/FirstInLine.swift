/// A first-in-first-out line that takes its first in O(1) and lets go of each element as it is
/// taken: a head index into an array, compacted once half of it has been taken. The socket's
/// unread messages and its line of writers (which ``SocketEngine/enqueue(_:)`` can fill with
/// many small messages) are both kept in one.
struct FirstInLine<Element> {
    private var slots: [Element?] = []
    private var head = 0

    /// How many wait.
    var count: Int { slots.count - head }

    var isEmpty: Bool { head == slots.count }

    /// What waits, first first.
    var waiting: [Element] { slots[head...].compactMap { $0 } }

    mutating func append(_ element: Element) { slots.append(element) }

    /// The first in line (its slot let go at once), or `nil`.
    mutating func popFirst() -> Element? {
        guard head < slots.count else { return nil }
        let first = slots[head].take()
        head += 1
        if head == slots.count {
            slots.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64, head * 2 >= slots.count {
            slots.removeFirst(head)
            head = 0
        }
        return first
    }
}
