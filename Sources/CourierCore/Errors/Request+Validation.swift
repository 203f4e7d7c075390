#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A request's problems as the one error Courier throws: what a transport, the exchange and a user
/// who renders a request elsewhere call before anything is sent.
extension Request {
    /// Throws when the request has any ``problems``.
    /// - Throws: ``CourierError`` with cause ``CourierError/Cause/invalidRequest(_:)``.
    public func validate() throws(CourierError) {
        let found = problems
        guard found.isEmpty else {
            throw CourierError(.invalidRequest(found), request: self)
        }
    }

    /// The absolute URL the request is sent to (``baseURL`` plus the percent-encoded path
    /// segments and query items), or `nil` when the request has ``problems``.
    ///
    /// Use ``validatedURL()`` to learn why there is none.
    public var url: URL? { try? validatedURL() }

    /// The absolute URL the request is sent to: ``baseURL`` plus the percent-encoded path segments
    /// and query items.
    /// - Returns: The URL.
    /// - Throws: ``CourierError`` with cause ``CourierError/Cause/invalidRequest(_:)`` when the
    ///   request has problems.
    public func validatedURL() throws(CourierError) -> URL {
        try hopURL(isValid: false)
    }

    /// The absolute URL the request is sent to, as a string: what a transport that parses URLs
    /// itself (AsyncHTTPClient, for one) sends, validated once and not parsed into a `URL` here.
    /// - Returns: The percent-encoded URL string.
    /// - Throws: ``CourierError`` with cause ``CourierError/Cause/invalidRequest(_:)`` when the
    ///   request has problems; nothing is rendered then.
    public func validatedURLString() throws(CourierError) -> String {
        try validate()
        return try renderedURLString()
    }

    /// The absolute URL the request is sent to, rendered without validating the request again:
    /// for a transport that the exchange told the hop is valid (``StreamOptions/hopIsValid``).
    /// - Returns: The percent-encoded URL string.
    /// - Throws: ``CourierError`` with cause ``CourierError/Cause/invalidRequest(_:)`` when the
    ///   request has no base URL.
    @_spi(Transports) public func renderedURLString() throws(CourierError) -> String {
        guard let string = urlString(redacting: nil) else {
            throw CourierError(.invalidRequest([RequestProblem(.missingURL, "the request has no base URL")]), request: self)
        }
        return string
    }

    /// ``renderedURLString()`` parsed, or ``validatedURL()`` when `isValid` is `false`: the URL of
    /// a hop, validated at most once.
    package func hopURL(isValid: Bool) throws(CourierError) -> URL {
        if !isValid { try validate() }
        guard let url = URL(string: try renderedURLString()) else {
            throw CourierError(.invalidRequest([RequestProblem(.invalidURL, "the rendered URL did not parse")]), request: self)
        }
        return url
    }

    /// This request with the credentials of its URL's userinfo (`https://user:password@host/`)
    /// sent as Basic authentication (RFC 7617), as curl and reqwest send them, and the userinfo
    /// taken off the URL (it never goes on the wire: RFC 9110 §4.2.4). An `Authorization` field
    /// the request already has wins (the userinfo is still taken off). The header is a
    /// credential like any other: redacted when printed, and not sent to another origin after a
    /// redirect. `nil` when the URL has no userinfo.
    /// - Throws: A ``RequestProblem/Kind/invalidCredentials`` problem when the user name holds a
    ///   `:` (percent-encoded in the URL), which Basic authentication cannot carry.
    func movingUserInfoToAuthorization() throws(CourierError) -> Request? {
        guard let base = baseURL, base.user != nil || base.password != nil else { return nil }
        var request = self
        request.baseURL = base.removingUserInfo()
        guard request.headers[.authorization] == nil else { return request }
        // Read as written and decoded here, to bytes (RFC 7617 sends UTF-8, and `URL.user` and
        // `password` decode on one platform and not on another).
        let components = URLComponents(url: base, resolvingAgainstBaseURL: false)
        let user = PercentEncoding.decodedBytes(Substring(components?.percentEncodedUser ?? ""))
        let password = PercentEncoding.decodedBytes(Substring(components?.percentEncodedPassword ?? ""))
        guard !user.contains(UInt8(ascii: ":")) else {
            throw CourierError(
                .invalidRequest([RequestProblem(.invalidCredentials, "the URL's user name holds a ':', which Basic authentication cannot carry (RFC 7617)")]),
                request: self)
        }
        request.headers[.authorization] = "Basic " + Data(user + [UInt8(ascii: ":")] + password).base64EncodedString()
        return request
    }
}
