#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension Request {
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
