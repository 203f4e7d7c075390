/// An ordered, multi-valued collection of HTTP header fields with case-insensitive names.
///
/// Fields keep the order they were added in, and a name may appear more than once. Lookups
/// ignore the letter case of names.
///
/// ```swift
/// var headers: HTTPHeaders = [.accept: "application/json"]
/// headers.add("X-Tag", "a")
/// headers.add("x-tag", "b")
/// headers.values(for: "X-TAG")  // ["a", "b"]
/// ```
public struct HTTPHeaders: Sendable, Hashable, RandomAccessCollection, ExpressibleByDictionaryLiteral,
    CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable
{
    /// One header field: a name and a value.
    public struct Field: Sendable, Hashable {
        /// The field name.
        public var name: HeaderName
        /// The field value, without surrounding whitespace.
        public var value: String

        /// Creates a field.
        /// - Parameters:
        ///   - name: The field name.
        ///   - value: The field value.
        public init(name: HeaderName, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The fields in the order they were added.
    public private(set) var fields: [Field]

    /// Names whose values descriptions and mirrors hide, on top of the standard sensitive names
    /// (see ``Redaction``). ``header(_:_:sensitive:)`` and ``apiKey(_:in:)`` add to it. Not part
    /// of equality: two collections with the same fields are equal.
    public private(set) var sensitiveNames: Set<HeaderName> = []

    /// Creates an empty collection.
    public init() { fields = [] }

    /// Creates a collection from fields, keeping their order.
    /// - Parameter fields: The fields.
    public init(_ fields: [Field]) { self.fields = fields }

    /// Creates a collection from a dictionary literal, keeping the literal's order.
    /// - Parameter elements: Name and value pairs.
    public init(dictionaryLiteral elements: (HeaderName, String)...) {
        fields = elements.map { Field(name: $0.0, value: $0.1) }
    }

    /// Marks `name` as sensitive, so that printing these headers hides its value.
    /// - Parameter name: The header name, in any letter case.
    public mutating func markSensitive(_ name: HeaderName) {
        sensitiveNames.insert(name)
    }

    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool { lhs.fields == rhs.fields }
    public func hash(into hasher: inout Hasher) { hasher.combine(fields) }

    /// The field as shown: the value hidden when the name is sensitive.
    private func shown(_ field: Field) -> String {
        sensitiveNames.contains(field.name) ? "\(field.name.rawValue): \(Redaction.placeholder)" : field.description
    }

    /// Each field as printed, one per line: values of sensitive names hidden.
    var shownFields: [String] { fields.map(shown) }

    /// The value for `name` as printed: ``Redaction/placeholder`` when the name is sensitive.
    func shownValue(of name: HeaderName) -> String? {
        guard let value = self[name] else { return nil }
        return sensitiveNames.contains(name) || Redaction.standard.isSensitive(header: name) ? Redaction.placeholder : value
    }

    public var startIndex: Int { fields.startIndex }
    public var endIndex: Int { fields.endIndex }
    public subscript(position: Int) -> Field { fields[position] }

    /// The values of every field named `name`, in order.
    /// - Parameter name: The name to look up, in any letter case.
    /// - Returns: The values; empty when there is no such field.
    public func values(for name: HeaderName) -> [String] {
        fields.filter { $0.name == name }.map(\.value)
    }

    /// The fields as they go out on one line each: a name that repeats is joined into one field,
    /// where the first one was, its values separated by `", "`, or by `"; "` for `Cookie`
    /// (RFC 6265 §5.4: one `Cookie` field). The one rule both transports render by.
    public var joinedFields: [Field] {
        guard hasRepeatedNames else { return fields }
        var joined: [Field] = []
        joined.reserveCapacity(fields.count)
        for field in fields {
            if let index = joined.firstIndex(where: { $0.name == field.name }) {
                joined[index].value += (field.name.canonical == "cookie" ? "; " : ", ") + field.value
            } else {
                joined.append(field)
            }
        }
        return joined
    }

    /// Whether any name appears more than once.
    package var hasRepeatedNames: Bool {
        guard fields.count > 1 else { return false }
        for index in fields.indices.dropLast() {
            let name = fields[index].name
            for other in fields[(index + 1)...] where other.name == name { return true }
        }
        return false
    }

    /// Whether a field named `name` is present.
    /// - Parameter name: The name to look up, in any letter case.
    public func contains(_ name: HeaderName) -> Bool {
        fields.contains { $0.name == name }
    }

    /// The value for `name`: the first value, or all values joined by `", "` when the name
    /// repeats. Setting replaces every field with that name (in place of the first one); setting
    /// `nil` removes them.
    public subscript(name: HeaderName) -> String? {
        get {
            var result: String?
            for field in fields where field.name == name {
                if let existing = result { result = existing + ", " + field.value } else { result = field.value }
            }
            return result
        }
        set {
            if let newValue { set(name, newValue) } else { remove(name) }
        }
    }

    /// Appends a field, keeping any existing fields with the same name.
    /// - Parameters:
    ///   - name: The field name.
    ///   - value: The field value.
    public mutating func add(_ name: HeaderName, _ value: String) {
        reserveForFirstField()
        fields.append(Field(name: name, value: value))
    }

    /// Replaces every field named `name` with one field, at the position of the first one (or at
    /// the end when there was none).
    /// - Parameters:
    ///   - name: The field name.
    ///   - value: The new value.
    public mutating func set(_ name: HeaderName, _ value: String) {
        guard let first = fields.firstIndex(where: { $0.name == name }) else {
            reserveForFirstField()
            fields.append(Field(name: name, value: value))
            return
        }
        fields[first] = Field(name: name, value: value)
        if fields[(first + 1)...].contains(where: { $0.name == name }) {
            let tail = fields[(first + 1)...].filter { $0.name != name }
            fields.replaceSubrange((first + 1)..., with: tail)
        }
    }

    /// Requests carry a handful of fields: room for several at the first one spares the array
    /// regrowing with each builder.
    @inline(__always)
    private mutating func reserveForFirstField() {
        if fields.isEmpty { fields.reserveCapacity(6) }
    }

    /// Removes every field named `name`.
    /// - Parameter name: The name, in any letter case.
    public mutating func remove(_ name: HeaderName) {
        fields.removeAll { $0.name == name }
    }

    /// The fields as `Name: value` lines, with the values of sensitive names (credentials,
    /// cookies, tokens: see ``Redaction``) replaced by `<redacted>`. Read values with the
    /// subscript or ``values(for:)``.
    public var description: String {
        fields.map(shown).joined(separator: "\n")
    }

    /// The same as ``description``: secrets stay hidden in debug output too.
    public var debugDescription: String { description }

    /// The fields as `Name: value` strings, secrets redacted, so that `dump` and debuggers do not
    /// show credentials.
    public var customMirror: Mirror {
        Mirror(self, unlabeledChildren: fields.map(shown), displayStyle: .collection)
    }
}

extension HTTPHeaders.Field: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `Name: value`, with the value of a sensitive name replaced by `<redacted>`.
    public var description: String {
        let shown = Redaction.standard.isSensitive(header: name) ? Redaction.placeholder : value
        return "\(name.rawValue): \(shown)"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// The name and the (redacted) value.
    public var customMirror: Mirror {
        let shown = Redaction.standard.isSensitive(header: name) ? Redaction.placeholder : value
        return Mirror(self, children: ["name": name.rawValue, "value": shown])
    }
}
