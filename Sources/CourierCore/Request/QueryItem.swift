/// One `name=value` pair of a URL query.
///
/// Names and values are normally stored unencoded; Courier percent-encodes them when it renders
/// the URL, so `a+b c&d` arrives at the server as exactly that string. Order is kept and a name
/// may repeat.
///
/// For input that is already percent-encoded (a cursor copied from a `Link` header, a signed
/// value), use ``percentEncoded(name:value:)``: it is sent as it is, after a check that it cannot
/// change the query's structure. Nothing is ever encoded twice by accident: the two kinds are
/// separate.
public struct QueryItem: Sendable, Hashable {
    /// The name: unencoded, or encoded when ``isPercentEncoded`` is set.
    public var name: String
    /// The value, `nil` to render the name alone (`?flag`): unencoded, or encoded when
    /// ``isPercentEncoded`` is set.
    public var value: String?
    /// Whether ``name`` and ``value`` are already percent-encoded and are sent as they are.
    public var isPercentEncoded: Bool
    /// Whether descriptions and mirrors hide the value even though the name is not a standard
    /// sensitive one (``apiKey(_:in:)`` sets it). Not part of equality.
    public var isSensitive = false

    /// Creates a query item from unencoded text.
    /// - Parameters:
    ///   - name: The unencoded name.
    ///   - value: The unencoded value, or `nil` for a bare name.
    public init(name: String, value: String?) {
        self.name = name
        self.value = value
        self.isPercentEncoded = false
    }

    /// Creates a query item from already percent-encoded text, sent exactly as given.
    ///
    /// The name and value may hold only characters allowed in a query component, `+`, valid
    /// `%XX` escapes, and (in the value) `=`. Anything else, such as `&`, `#`, a space or a bare
    /// `%`, would change the query's structure and is reported as a
    /// ``RequestProblem/Kind/invalidQuery`` problem.
    /// - Parameters:
    ///   - name: The encoded name.
    ///   - value: The encoded value, or `nil` for a bare name.
    /// - Returns: The item.
    public static func percentEncoded(name: String, value: String?) -> QueryItem {
        var item = QueryItem(name: name, value: value)
        item.isPercentEncoded = true
        return item
    }

    /// The unencoded name, for redaction checks.
    var decodedName: String {
        isPercentEncoded ? PercentEncoding.decode(Substring(name)) : name
    }
}

extension QueryItem: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `name=value`, with the value of a sensitive name (see ``Redaction``) hidden.
    public var description: String {
        guard let value else { return name }
        return "\(name)=\(hidesValue ? Redaction.placeholder : value)"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// The name and the (redacted) value.
    public var customMirror: Mirror {
        let shown = value.map { hidesValue ? Redaction.placeholder : $0 }
        return Mirror(self, children: ["name": name, "value": shown as Any, "isPercentEncoded": isPercentEncoded])
    }

    private var hidesValue: Bool { isSensitive || Redaction.standard.isSensitive(queryName: decodedName) }

    public static func == (lhs: QueryItem, rhs: QueryItem) -> Bool {
        lhs.name == rhs.name && lhs.value == rhs.value && lhs.isPercentEncoded == rhs.isPercentEncoded
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(value)
        hasher.combine(isPercentEncoded)
    }
}
