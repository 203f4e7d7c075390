/// The domain rules of cookies: canonical names, domain-match
/// ([RFC 6265 §5.1.3](https://www.rfc-editor.org/rfc/rfc6265#section-5.1.3)) and public
/// suffixes.
///
/// **Public suffixes.** A server may not set a cookie for a domain that anyone can register
/// under (`com`, `co.uk`, `github.io`, `myshopify.com`): every site below it would receive it.
/// Courier checks the whole Public Suffix List, compiled in (``PublicSuffixList``), with its
/// wildcards and exceptions; add suffixes of your own (a private deployment's) with
/// ``CookieJar/Policy/publicSuffixes``. A cookie whose `Domain` is a public suffix is refused,
/// unless the `Domain` is the request's own host, in which case it is kept for that host only
/// (RFC 6265 §5.3 step 5).
enum CookieDomain {
    /// `domain` lowercased, without a leading dot.
    static func canonical(_ domain: String) -> String {
        var lowered = domain.lowercased()
        if lowered.hasPrefix(".") { lowered.removeFirst() }
        return lowered
    }

    /// Whether `host` domain-matches `domain`: the same string, or `host` ends with `.domain`
    /// and is a name, not an IP address.
    static func host(_ host: String, matches domain: String, isIP: Bool) -> Bool {
        if host == domain { return true }
        guard !isIP, host.utf8.count > domain.utf8.count, host.hasSuffix(domain) else { return false }
        return host.utf8.dropLast(domain.utf8.count).last == UInt8(ascii: ".")
    }

    /// Whether `host` is an IPv4 or IPv6 address (IPv6 without its brackets).
    static func isIPAddress(_ host: String) -> Bool {
        if host.contains(":") { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }
    }

    /// Whether `domain` (canonical) is a public suffix by the list or is in `extra`. A
    /// trailing dot (`com.`) names the same domain.
    static func isPublicSuffix(_ domain: String, extra: Set<String>) -> Bool {
        var name = Substring(domain)
        if name.hasSuffix("."), name.count > 1 { name = name.dropLast() }
        if extra.contains(String(name)) { return true }
        return PublicSuffixList.isPublicSuffix(name)
    }
}

/// The path rules of cookies ([RFC 6265 §5.1.4](https://www.rfc-editor.org/rfc/rfc6265#section-5.1.4)).
enum CookiePath {
    /// The path a cookie gets when the server names none: the request path up to, not
    /// including, its last `/`; `/` when that leaves nothing.
    static func defaultPath(for requestPath: String) -> String {
        guard requestPath.hasPrefix("/"), let last = requestPath.lastIndex(of: "/"), last != requestPath.startIndex else { return "/" }
        return String(requestPath[..<last])
    }

    /// Whether a request for `requestPath` gets a cookie with `cookiePath`: the same path, or
    /// one below it.
    static func path(_ requestPath: String, matches cookiePath: String) -> Bool {
        if requestPath == cookiePath { return true }
        guard requestPath.hasPrefix(cookiePath) else { return false }
        if cookiePath.hasSuffix("/") { return true }
        return requestPath.utf8.dropFirst(cookiePath.utf8.count).first == UInt8(ascii: "/")
    }
}
