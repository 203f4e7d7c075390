/// One `name=value` pair of a URL query.
///
/// Names and values are stored unencoded; Courier percent-encodes them when it renders the URL,
/// so `a+b c&d` arrives at the server as exactly that string. Order is kept and a name may repeat.
public struct QueryItem: Sendable, Hashable {
    /// The unencoded name.
    public var name: String
    /// The unencoded value; `nil` renders the name alone (`?flag`).
    public var value: String?

    /// Creates a query item.
    /// - Parameters:
    ///   - name: The unencoded name.
    ///   - value: The unencoded value, or `nil` for a bare name.
    public init(name: String, value: String?) {
        self.name = name
        self.value = value
    }
}
