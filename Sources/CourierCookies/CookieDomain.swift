import CourierCore

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
    /// and is a name, not an IP address. Compared as bytes, as RFC 6265 compares them (both are
    /// lowercase, and a URL's host is ASCII).
    static func host(_ host: String, matches domain: String, isIP: Bool) -> Bool {
        // (`==` compares ASCII strings byte for byte, at memcmp's speed.)
        if host == domain { return true }
        guard !isIP, host.utf8.count > domain.utf8.count else { return false }
        let answer = host.utf8.withContiguousStorageIfAvailable { host in
            domain.utf8.withContiguousStorageIfAvailable { domain in
                host[host.count - domain.count - 1] == UInt8(ascii: ".") && host.suffix(domain.count).elementsEqual(domain)
            }
        }
        if let answer = answer ?? nil { return answer }
        return host.utf8.dropLast(domain.utf8.count).last == UInt8(ascii: ".") && host.utf8.reversed().starts(with: domain.utf8.reversed())
    }

    /// Whether `host` is an IPv4 or IPv6 address (IPv6 without its brackets): any `:` makes it
    /// IPv6; IPv4 is four groups of one to three ASCII digits.
    static func isIPAddress(_ host: String) -> Bool {
        if host.utf8.contains(UInt8(ascii: ":")) { return true }
        var dots = 0, digits = 0
        for byte in host.utf8 {
            if byte == UInt8(ascii: ".") {
                guard digits > 0 else { return false }
                dots += 1
                digits = 0
            } else {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte), digits < 3 else { return false }
                digits += 1
            }
        }
        return dots == 3 && digits > 0
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
    /// one below it. Compared as bytes (a request's path is percent-encoded ASCII).
    static func path(_ requestPath: String, matches cookiePath: String) -> Bool {
        // Native strings (every one a jar holds) are read as the bytes they are.
        if let answer = requestPath.utf8.withContiguousStorageIfAvailable({ path($0, matches: cookiePath) }) { return answer }
        return Array(requestPath.utf8).withUnsafeBufferPointer { path($0, matches: cookiePath) }
    }

    /// The same rule with the request's path as its bytes: the form a bucket uses, which reads
    /// that path once for all its cookies.
    static func path(_ request: UnsafeBufferPointer<UInt8>, matches cookiePath: String) -> Bool {
        // Most cookies are for the whole site.
        if cookiePath == "/" { return request.first == UInt8(ascii: "/") }
        let answer = cookiePath.utf8.withContiguousStorageIfAvailable { cookie in path(request, matches: cookie) }
        if let answer { return answer }
        return Array(cookiePath.utf8).withUnsafeBufferPointer { path(request, matches: $0) }
    }

    private static func path(_ request: UnsafeBufferPointer<UInt8>, matches cookie: UnsafeBufferPointer<UInt8>) -> Bool {
        guard request.count >= cookie.count, request.prefix(cookie.count).elementsEqual(cookie) else { return false }
        return request.count == cookie.count || cookie.last == UInt8(ascii: "/") || request[cookie.count] == UInt8(ascii: "/")
    }
}
