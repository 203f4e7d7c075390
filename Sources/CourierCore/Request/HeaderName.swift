/// The name of an HTTP header field.
///
/// Header names compare and hash case-insensitively, as
/// [RFC 9110 §5.1](https://www.rfc-editor.org/rfc/rfc9110#section-5.1) requires, while
/// ``rawValue`` keeps the spelling the caller wrote. Common names are static members; any other
/// name can be written as a string literal (`"X-Request-ID"`).
///
/// | Purpose | Names |
/// | --- | --- |
/// | Content | ``contentType``, ``contentLength``, ``contentEncoding``, ``contentLocation``, ``contentRange``, ``transferEncoding`` |
/// | Negotiation | ``accept``, ``acceptEncoding``, ``acceptLanguage``, ``userAgent``, ``host`` |
/// | Credentials and cookies | ``authorization``, ``proxyAuthorization``, ``cookie``, ``setCookie`` |
/// | Caching | ``cacheControl``, ``cacheStatus``, ``age``, ``date``, ``expires``, ``eTag``, ``lastModified``, ``pragma``, ``vary`` |
/// | Conditions and ranges | ``ifNoneMatch``, ``ifModifiedSince``, ``ifRange``, ``range`` |
/// | Redirects, links, retries, events | ``location``, ``link``, ``retryAfter``, ``lastEventID`` |
///
/// ```swift
/// let etag = response.headers[.eTag]
/// let cached = Request.get |> url("https://api.example.com/users") |> header(.ifNoneMatch, etag ?? "*")
/// ```
///
/// A name that is not a valid token is reported as a ``RequestProblem`` when the request is
/// rendered or sent.
public struct HeaderName: RawRepresentable, Sendable, Hashable, ExpressibleByStringLiteral,
    CustomStringConvertible
{
    /// The name as written by the caller.
    public let rawValue: String
    /// The name in lower case (ASCII), as names compare: what a transport switches on, made once
    /// when the name is made.
    public let canonical: String
    /// Whether the name is a valid RFC 9110 token, decided once when the name is made (names
    /// are immutable), so that checking a request does not scan its names again.
    public let isValid: Bool
    /// The name's part in message framing, decided once; `.none` for nearly every name.
    let framingRole: FramingRole

    /// Creates a header name.
    /// - Parameter rawValue: The name, for example `"X-Request-ID"`.
    public init(rawValue: String) {
        self.rawValue = rawValue
        (self.canonical, self.isValid) = HTTPSyntax.lowercasedToken(rawValue)
        self.framingRole = FramingRole(canonical: canonical)
    }

    /// Creates a header name from a string literal.
    /// - Parameter value: The name.
    public init(stringLiteral value: String) { self.init(rawValue: value) }

    /// The name as written by the caller.
    public var description: String { rawValue }


    public static func == (lhs: HeaderName, rhs: HeaderName) -> Bool { lhs.canonical == rhs.canonical }
    public func hash(into hasher: inout Hasher) { hasher.combine(canonical) }

    /// `Accept`
    public static let accept = HeaderName(rawValue: "Accept")
    /// `Accept-Encoding`
    public static let acceptEncoding = HeaderName(rawValue: "Accept-Encoding")
    /// `Accept-Language`
    public static let acceptLanguage = HeaderName(rawValue: "Accept-Language")
    /// `Authorization`: credentials; always redacted in descriptions and logs.
    public static let authorization = HeaderName(rawValue: "Authorization")
    /// `Cache-Control`
    public static let cacheControl = HeaderName(rawValue: "Cache-Control")
    /// `Content-Encoding`
    public static let contentEncoding = HeaderName(rawValue: "Content-Encoding")
    /// `Content-Length`
    public static let contentLength = HeaderName(rawValue: "Content-Length")
    /// `Content-Type`
    public static let contentType = HeaderName(rawValue: "Content-Type")
    /// `Cookie`: always redacted in descriptions and logs.
    public static let cookie = HeaderName(rawValue: "Cookie")
    /// `Age`.
    public static let age = HeaderName(rawValue: "Age")
    /// `Vary`.
    public static let vary = HeaderName(rawValue: "Vary")
    /// `Expires`.
    public static let expires = HeaderName(rawValue: "Expires")
    /// `Date`.
    public static let date = HeaderName(rawValue: "Date")
    /// `Pragma`.
    public static let pragma = HeaderName(rawValue: "Pragma")
    /// `Content-Location`.
    public static let contentLocation = HeaderName(rawValue: "Content-Location")
    /// `If-Modified-Since`.
    public static let ifModifiedSince = HeaderName(rawValue: "If-Modified-Since")
    /// `Cache-Status` ([RFC 9211](https://www.rfc-editor.org/rfc/rfc9211)).
    public static let cacheStatus = HeaderName(rawValue: "Cache-Status")
    /// `ETag`
    public static let eTag = HeaderName(rawValue: "ETag")
    /// `Content-Range`.
    public static let contentRange = HeaderName(rawValue: "Content-Range")
    /// `If-Range`.
    public static let ifRange = HeaderName(rawValue: "If-Range")
    /// `Last-Event-ID`, sent by a reconnecting server-sent events client.
    public static let lastEventID = HeaderName(rawValue: "Last-Event-ID")
    /// `Last-Modified`.
    public static let lastModified = HeaderName(rawValue: "Last-Modified")
    /// `Range`.
    public static let range = HeaderName(rawValue: "Range")
    /// `Host`
    public static let host = HeaderName(rawValue: "Host")
    /// `If-None-Match`
    public static let ifNoneMatch = HeaderName(rawValue: "If-None-Match")
    /// `Link` ([RFC 8288](https://www.rfc-editor.org/rfc/rfc8288))
    public static let link = HeaderName(rawValue: "Link")
    /// `Location`
    public static let location = HeaderName(rawValue: "Location")
    /// `Proxy-Authorization`: always redacted in descriptions and logs.
    public static let proxyAuthorization = HeaderName(rawValue: "Proxy-Authorization")
    /// `Idempotency-Key`: one key per logical call, so that a server can make a repeated `POST` safe
    /// (see ``IdempotencyKeyMiddleware``); a request that carries one is retryable.
    public static let idempotencyKey = HeaderName(rawValue: "Idempotency-Key")
    /// `Retry-After`
    public static let retryAfter = HeaderName(rawValue: "Retry-After")
    /// `Set-Cookie`: always redacted in descriptions and logs.
    public static let setCookie = HeaderName(rawValue: "Set-Cookie")
    /// `Transfer-Encoding` ([RFC 9112 §6.1](https://www.rfc-editor.org/rfc/rfc9112#section-6.1)).
    public static let transferEncoding = HeaderName(rawValue: "Transfer-Encoding")
    /// `User-Agent`
    public static let userAgent = HeaderName(rawValue: "User-Agent")
}

/// Header names that take part in message framing or connection handling, which a caller
/// must not set freely (see `Request.collectFramingProblems`).
enum FramingRole: UInt8, Sendable {
    case none, contentLength, transferEncoding, trailer, upgrade, proxyConnection, te, connection, host

    /// The role of a lower-cased name; the length decides first, so most names cost one
    /// comparison at most.
    init(canonical: String) {
        switch canonical.utf8.count {
        case 2: self = canonical == "te" ? .te : .none
        case 4: self = canonical == "host" ? .host : .none
        case 7: self = canonical == "trailer" ? .trailer : canonical == "upgrade" ? .upgrade : .none
        case 10: self = canonical == "connection" ? .connection : .none
        case 14: self = canonical == "content-length" ? .contentLength : .none
        case 16: self = canonical == "proxy-connection" ? .proxyConnection : .none
        case 17: self = canonical == "transfer-encoding" ? .transferEncoding : .none
        default: self = .none
        }
    }
}
