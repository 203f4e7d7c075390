/// A media type such as `application/json; charset=utf-8`
/// ([RFC 9110 §8.3.1](https://www.rfc-editor.org/rfc/rfc9110#section-8.3.1)).
///
/// An open set: common types are static members (`.json`, `.formURLEncoded`, …).
/// ``matches(_:)`` compares the `type/subtype` part only, case-insensitively, and understands
/// `*` wildcards and `+json`-style structured suffixes.
public struct MediaType: RawRepresentable, Sendable, Hashable, ExpressibleByStringLiteral,
    CustomStringConvertible
{
    /// The full value, parameters included.
    public let rawValue: String

    /// Creates a media type from a header value.
    /// - Parameter rawValue: For example `"text/plain; charset=utf-8"`.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Creates a media type from a string literal.
    /// - Parameter value: The media type.
    public init(stringLiteral value: String) { self.rawValue = value }

    /// The full value.
    public var description: String { rawValue }

    /// The lower-cased `type/subtype`, without parameters or whitespace.
    public var essence: String {
        // Up to the first ";" byte: a ";" after a prepend mark (U+070F) is not a Character of its own.
        let head = HTTPSyntax.parts(of: rawValue, separatedBy: UInt8(ascii: ";")).first ?? ""
        return HTTPSyntax.asciiLowercased(head)
    }

    /// Whether `other` is acceptable where `self` is expected: equal essences, a `*` wildcard in
    /// `self`, or a structured suffix (`application/problem+json` matches `application/json`).
    ///
    /// Both must be well formed, `type/subtype` with each a token
    /// ([RFC 9110 §5.6.2](https://www.rfc-editor.org/rfc/rfc9110#section-5.6.2)): anything else
    /// (`/json`, `application/`, `a/b/c`, whitespace inside) matches nothing.
    /// - Parameter other: The media type received.
    public func matches(_ other: MediaType) -> Bool {
        guard let expected = Self.parts(of: essence), let actual = Self.parts(of: other.essence) else { return false }
        if expected[0] == "*" { return true }
        guard expected[0] == actual[0] else { return false }
        if expected[1] == "*" || expected[1] == actual[1] { return true }
        return actual[1].hasSuffix("+" + expected[1])
    }

    /// The type and subtype of an essence, when both are tokens.
    private static func parts(of essence: String) -> [Substring]? {
        let parts = essence.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy(HTTPSyntax.isTokenByte) }) else { return nil }
        return parts
    }

    /// `application/json`
    public static let json: MediaType = "application/json"
    /// `application/x-www-form-urlencoded`
    public static let formURLEncoded: MediaType = "application/x-www-form-urlencoded"
    /// `multipart/form-data`
    public static let multipartFormData: MediaType = "multipart/form-data"
    /// `text/plain; charset=utf-8`
    public static let plainText: MediaType = "text/plain; charset=utf-8"
    /// `text/html`
    public static let html: MediaType = "text/html"
    /// `application/octet-stream`
    public static let octetStream: MediaType = "application/octet-stream"
    /// `application/xml`
    public static let xml: MediaType = "application/xml"
    /// `text/event-stream`: server-sent events (see ``ByteStream/serverSentEvents``).
    public static let eventStream: MediaType = "text/event-stream"
    /// `*/*`
    public static let any: MediaType = "*/*"
}
