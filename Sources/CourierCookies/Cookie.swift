import CourierCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A cookie a server set, as a ``CookieJar`` keeps it and sends it back
/// ([RFC 6265 §5.3](https://www.rfc-editor.org/rfc/rfc6265#section-5.3)).
///
/// Make one from a `Set-Cookie` field with ``init(setCookie:from:at:policy:)``: it is parsed strictly
/// and refused, with a ``CookieRejection`` saying why, when the server may not set it (another
/// site's domain, a public suffix, `Secure` over `http`, a broken `__Host-` prefix).
///
/// The value is a secret: ``description``, `dump` and every mirror show `<redacted>` in its
/// place. Only ``value`` itself and the `Codable` form (which a saved jar needs) hold it.
///
/// ```swift
/// let cookie = try Cookie(setCookie: "session=abc; Path=/; Secure; HttpOnly", from: url, at: Date())
/// print(cookie)   // session=<redacted>; Domain=api.example.com; Path=/; Secure; HttpOnly
/// ```
public struct Cookie: Sendable, Hashable, Codable {
    /// The cookie's name, for example `session`. Case-sensitive.
    public var name: String
    /// The cookie's value. A secret: never printed.
    public var value: String
    /// The domain it belongs to, lowercase and without a leading dot.
    public var domain: String
    /// Whether it goes to ``domain`` only (the server named no `Domain`), not to its subdomains.
    public var hostOnly: Bool
    /// The path it goes to, and every path below it.
    public var path: String
    /// When it expires; `nil` for a session cookie, kept until ``CookieJar/endingSession()``.
    public var expires: Date?
    /// Whether it goes over secure connections (`https`) only.
    public var secure: Bool
    /// Whether the server marked it `HttpOnly`. Courier only speaks HTTP, so this changes
    /// nothing it sends; it is kept for whoever reads the jar.
    public var httpOnly: Bool
    /// The `SameSite` attribute, when the server gave a valid one. Kept, not enforced: a client
    /// without pages has no "site for cookies", so every request counts as same-site.
    public var sameSite: SameSite?
    /// When the jar first stored a cookie with this name, domain and path.
    public var created: Date
    /// When the jar last stored or sent it: the oldest is evicted first.
    public var lastAccess: Date

    /// A cookie's `SameSite` attribute ([RFC 6265bis §4.1.2.7](https://datatracker.ietf.org/doc/html/draft-ietf-httpbis-rfc6265bis#section-4.1.2.7)).
    public enum SameSite: String, Sendable, Hashable, Codable {
        /// `SameSite=Strict`.
        case strict = "Strict"
        /// `SameSite=Lax`.
        case lax = "Lax"
        /// `SameSite=None`.
        case none = "None"
    }

    /// Creates a cookie from its parts, as a jar stores it. Use ``init(setCookie:from:at:policy:)`` for
    /// what a server sent: it applies the rules this initializer does not.
    /// - Parameters:
    ///   - name: The name.
    ///   - value: The value.
    ///   - domain: The domain; lowercased, a leading dot dropped.
    ///   - hostOnly: Whether it goes to `domain` only; `true` by default.
    ///   - path: The path; `/` by default.
    ///   - expires: When it expires; `nil` (a session cookie) by default.
    ///   - secure: Whether it goes over `https` only.
    ///   - httpOnly: Whether it was marked `HttpOnly`.
    ///   - sameSite: Its `SameSite` attribute.
    ///   - created: When it was made; also its ``lastAccess``.
    public init(
        name: String, value: String, domain: String, hostOnly: Bool = true, path: String = "/", expires: Date? = nil,
        secure: Bool = false, httpOnly: Bool = false, sameSite: SameSite? = nil, created: Date = Date()
    ) {
        self.name = name
        self.value = value
        self.domain = CookieDomain.canonical(domain)
        self.hostOnly = hostOnly
        self.path = path
        self.expires = expires
        self.secure = secure
        self.httpOnly = httpOnly
        self.sameSite = sameSite
        self.created = created
        self.lastAccess = created
    }

    /// Whether the cookie has expired at `now`.
    /// - Parameter now: The time to check against.
    /// - Returns: `true` when it has an expiry at or before `now`.
    public func isExpired(at now: Date) -> Bool {
        guard let expires else { return false }
        return expires <= now
    }

    /// Whether the jar sends this cookie to `url` (domain, path and `Secure` rules, RFC 6265
    /// §5.4); expiry is not checked.
    /// - Parameter url: The request's URL.
    /// - Returns: `true` when it goes with a request to `url`.
    public func matches(_ url: URL) -> Bool {
        guard let target = CookieTarget(url) else { return false }
        return matches(target)
    }

    /// The rule for one cookie. A jar applies it a domain at a time
    /// (``CookieBucket/positions(matching:hostIsDomain:hostMatchesDomain:)``), asking the host
    /// question once for the domain's cookies.
    func matches(_ target: CookieTarget) -> Bool {
        if secure && !target.isSecure { return false }
        let hostMatches = hostOnly ? target.host == domain : CookieDomain.host(target.host, matches: domain, isIP: target.isIP)
        return hostMatches && CookiePath.path(target.path, matches: path)
    }

    /// What identifies a cookie in a jar: a new one with the same name, domain, host-only flag
    /// and path replaces it (RFC 6265bis §5.7). The flag keeps a host's own cookie apart from
    /// one a sibling subdomain sets for the parent domain: `sid=x; Domain=example.com` from
    /// `www.example.com` cannot replace `example.com`'s host-only `sid`.
    struct Key: Hashable, Sendable {
        var name: String
        var domain: String
        var hostOnly: Bool
        var path: String
    }

    var key: Key { Key(name: name, domain: domain, hostOnly: hostOnly, path: path) }
}

extension Cookie: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The cookie as a `Set-Cookie` line would give it, with its value hidden.
    public var description: String {
        var parts = ["\(name)=\(Redaction.placeholder)", "Domain=\(hostOnly ? domain : "." + domain)", "Path=\(path)"]
        if let expires { parts.append("Expires=\(HTTPDate.format(expires))") }
        if secure { parts.append("Secure") }
        if httpOnly { parts.append("HttpOnly") }
        if let sameSite { parts.append("SameSite=\(sameSite.rawValue)") }
        return parts.joined(separator: "; ")
    }

    /// The same as ``description``: the value is hidden.
    public var debugDescription: String { description }

    /// The cookie's fields for `dump` and debuggers, its value hidden.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "name": name, "value": Redaction.placeholder, "domain": domain, "hostOnly": hostOnly, "path": path,
                "expires": expires as Any, "secure": secure, "httpOnly": httpOnly, "sameSite": sameSite as Any,
                "created": created, "lastAccess": lastAccess,
            ], displayStyle: .struct)
    }
}

/// A request's URL as the cookie rules read it: lowercase host, raw path, whether it is secure.
struct CookieTarget: Sendable {
    var host: String
    var isIP: Bool
    /// The percent-encoded path, `/` when empty.
    var path: String
    var isSecure: Bool
    /// Whether the scheme is one cookies are set from: `http`, `https`, `ws`, `wss`.
    var isHTTP: Bool

    init?(_ url: URL) {
        guard let scheme = url.scheme?.lowercased(), let rawHost = url.host(percentEncoded: true), !rawHost.isEmpty else { return nil }
        var host = rawHost.lowercased()
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.hasSuffix("."), host.count > 1 { host.removeLast() }
        self.host = host
        self.isIP = CookieDomain.isIPAddress(host)
        let path = url.path(percentEncoded: true)
        self.path = path.isEmpty ? "/" : path
        // RFC 6265bis §5.8.3 (after Secure Contexts): loopback counts as a secure origin, so a
        // server on http://localhost keeps the Secure cookies it sets during local development.
        self.isSecure = scheme == "https" || scheme == "wss" || Self.isLoopback(host, isIP: isIP)
        self.isHTTP = scheme == "http" || scheme == "https" || scheme == "ws" || scheme == "wss"
    }

    /// Whether `host` (lowercase, IPv6 without brackets) is this machine: `localhost` and names
    /// under it, 127.0.0.0/8, `::1`.
    static func isLoopback(_ host: String, isIP: Bool) -> Bool {
        if !isIP { return host == "localhost" || host.hasSuffix(".localhost") }
        if host.contains(":") { return isIPv6Loopback(host) }
        return host.hasPrefix("127.")
    }

    /// Whether `host` is `::1` in any spelling (`0:0:0:0:0:0:0:1`, `0::1`): eight groups once
    /// `::` is expanded, every one zero but the last, which is 1.
    private static func isIPv6Loopback(_ host: String) -> Bool {
        let halves = host.split(separator: "::", maxSplits: 1, omittingEmptySubsequences: false)
        func groups(_ text: Substring) -> [UInt16]? {
            if text.isEmpty { return [] }
            var values: [UInt16] = []
            for group in text.split(separator: ":", omittingEmptySubsequences: false) {
                guard (1...4).contains(group.utf8.count), let value = UInt16(group, radix: 16) else { return nil }
                values.append(value)
            }
            return values
        }
        guard let head = groups(halves[0]) else { return false }
        var all = head
        if halves.count == 2 {
            guard let tail = groups(halves[1]), head.count + tail.count < 8 else { return false }
            all += Array(repeating: 0, count: 8 - head.count - tail.count) + tail
        }
        return all.count == 8 && all.dropLast().allSatisfy { $0 == 0 } && all.last == 1
    }
}
