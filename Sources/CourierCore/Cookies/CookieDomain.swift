/// The domain rules of cookies: canonical names, domain-match
/// ([RFC 6265 §5.1.3](https://www.rfc-editor.org/rfc/rfc6265#section-5.1.3)) and public
/// suffixes.
///
/// **Public suffixes.** A server may not set a cookie for a domain that anyone can register
/// under (`com`, `co.uk`, `github.io`): every site below it would receive it. Courier has no
/// copy of the whole Public Suffix List (about 10,000 rules that change weekly); it uses a
/// bounded rule instead, documented and the same everywhere:
/// - every single-label domain (`com`, `dev`, `localhost`) is a public suffix;
/// - so is a common registry label under a two-letter country code (`co.uk`, `com.au`,
///   `ne.jp`, `gov.br`: the labels in ``registryLabels``);
/// - and the hosting suffixes in ``hostingSuffixes`` (`github.io`, `herokuapp.com`, …).
///
/// Add your own (the full list, say) with ``CookieJar/Policy/publicSuffixes``. A cookie whose
/// `Domain` is a public suffix is refused, unless the `Domain` is the request's own host, in
/// which case it is kept for that host only (RFC 6265 §5.3 step 5).
enum CookieDomain {
    /// Second-level labels that registries use under a country code (`co.uk`, `com.au`).
    static let registryLabels: Set<String> = [
        "ac", "co", "com", "edu", "go", "gob", "gouv", "gov", "govt", "ltd", "me", "mil", "ne", "net", "nhs", "nic", "nom", "or",
        "org", "plc", "sch",
    ]

    /// Suffixes under which hosting services give each customer a name of their own.
    static let hostingSuffixes: Set<String> = [
        "github.io", "githubusercontent.com", "gitlab.io", "herokuapp.com", "appspot.com", "blogspot.com", "cloudfront.net",
        "azurewebsites.net", "azurestaticapps.net", "netlify.app", "vercel.app", "pages.dev", "workers.dev", "web.app",
        "firebaseapp.com", "fly.dev", "onrender.com", "glitch.me", "ngrok.io", "ngrok-free.app", "s3.amazonaws.com",
        "elasticbeanstalk.com", "readthedocs.io", "now.sh", "surge.sh", "repl.co", "deno.dev",
    ]

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

    /// Whether `domain` (canonical) is a public suffix by the rule above or is in `extra`.
    static func isPublicSuffix(_ domain: String, extra: Set<String>) -> Bool {
        if extra.contains(domain) || hostingSuffixes.contains(domain) { return true }
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        if labels.count <= 1 { return true }
        if labels.count == 2, labels[1].count == 2, registryLabels.contains(String(labels[0])) { return true }
        return false
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
