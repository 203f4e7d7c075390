import CourierCore

/// Why a `Set-Cookie` field was not stored. A jar ignores such a field, as
/// [RFC 6265 §5.2](https://www.rfc-editor.org/rfc/rfc6265#section-5.2) says, and
/// ``CookieJar/store(setCookie:from:at:)`` returns the reasons.
///
/// The description names the rule, never the cookie's value.
#if hasAttribute(nonexhaustive)
    @nonexhaustive
#endif
public enum CookieRejection: Error, Sendable, Hashable, CustomStringConvertible {
    /// The field has no `name=value` pair before its first `;`.
    case noNameValuePair
    /// The name is empty or not an HTTP token (RFC 9110 §5.6.2).
    case invalidName
    /// The name or value holds a control character.
    case controlCharacter
    /// The name and value together exceed the limit (``CookieJar/Policy/maximumCookieSize``).
    case tooLarge(limit: Int)
    /// The request's URL has no host, or is not `http`, `https`, `ws` or `wss`.
    case unsupportedURL
    /// The `Domain` attribute does not cover the request's host: another site's domain.
    case domainMismatch
    /// The `Domain` attribute is a public suffix (`com`, `co.uk`), which every site under it
    /// would receive.
    case publicSuffix
    /// The `Domain` attribute is not a domain name (an internationalized one is taken in its
    /// ASCII form, `xn--…`; one with a space or punctuation in a label is not a name).
    case invalidDomain
    /// `Secure` was set over a connection that is not secure.
    case secureFromInsecureOrigin
    /// A `__Secure-` or `__Host-` name without what its prefix requires (`Secure`, a secure
    /// origin; for `__Host-` also no `Domain` and `Path=/`).
    case prefixRequirementsUnmet
    /// A connection that is not secure tried to replace (or shadow) a `Secure` cookie.
    case wouldOverwriteSecureCookie
    /// `SameSite=None` without `Secure`, which RFC 6265bis §5.7 (and every current browser)
    /// ignores: a cookie sent on every cross-site request must at least never travel in clear.
    case sameSiteNoneWithoutSecure

    /// What was wrong, without the cookie's value.
    public var description: String {
        switch self {
        case .noNameValuePair: "Set-Cookie has no name=value pair"
        case .invalidName: "the cookie's name is empty or not a token"
        case .controlCharacter: "the cookie's name or value holds a control character"
        case .tooLarge(let limit): "the cookie's name and value exceed \(limit) bytes"
        case .unsupportedURL: "the response's URL has no host or is not http(s)"
        case .domainMismatch: "the Domain attribute does not cover the host that set it"
        case .publicSuffix: "the Domain attribute is a public suffix"
        case .invalidDomain: "the Domain attribute is not a domain name"
        case .secureFromInsecureOrigin: "a Secure cookie was set over an insecure connection"
        case .prefixRequirementsUnmet: "the cookie's __Secure- or __Host- prefix requirements are not met"
        case .wouldOverwriteSecureCookie: "an insecure connection tried to overwrite a Secure cookie"
        case .sameSiteNoneWithoutSecure: "SameSite=None without Secure is ignored (RFC 6265bis §5.7)"
        }
    }
}
