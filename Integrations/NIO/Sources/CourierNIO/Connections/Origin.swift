import CourierCore

/// Where a request goes, as a connection pool keys it: scheme, host and port (RFC 6454's origin),
/// and the parts of the request line and the `Host` field that follow from the URL.
struct Origin: Hashable, Sendable {
    /// `http` or `https`.
    var isSecure: Bool
    /// The host without IPv6 brackets, lowercased.
    var host: String
    var port: Int

    /// Whether the host is an IP address (no server name is sent for it in TLS).
    var isIPAddress: Bool { Self.isIPAddress(host) }

    /// Whether `host` is an IP address (no server name is sent for it in TLS).
    static func isIPAddress(_ host: String) -> Bool {
        host.contains(":") || host.utf8.allSatisfy { $0 == UInt8(ascii: ".") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    /// The `Host` field's value: the host (bracketed when IPv6) and the port unless it is the
    /// scheme's default.
    var hostField: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == (isSecure ? 443 : 80) ? name : "\(name):\(port)"
    }
}

/// A validated absolute URL split into what a request line needs.
struct RequestTarget: Sendable {
    var origin: Origin
    /// The origin-form target: `/path?query`, never a fragment.
    var target: String

    /// The absolute-form target a proxy is sent (RFC 9112 §3.2.2): scheme, `Host` form of the
    /// authority (no userinfo), then the origin-form target.
    var absoluteForm: String { (origin.isSecure ? "https://" : "http://") + origin.hostField + target }

    /// Splits `url` (as ``/Courier/Request/validatedURLString()`` renders it).
    /// - Throws: ``/Courier/CourierError`` for a scheme other than `http` and `https`, a missing
    ///   host or a port out of range: nothing is sent.
    init(url: String) throws(CourierError) {
        let utf8 = url.utf8
        guard let colon = utf8.firstIndex(of: UInt8(ascii: ":")),
            utf8[colon...].starts(with: "://".utf8)
        else { throw Self.invalid("the URL has no scheme") }
        let scheme = url[..<colon].lowercased()
        let isSecure: Bool
        switch scheme {
        case "http": isSecure = false
        case "https": isSecure = true
        default: throw Self.invalid("the scheme \"\(scheme)\" is not http or https")
        }
        let authorityStart = utf8.index(colon, offsetBy: 3)
        let authorityEnd =
            utf8[authorityStart...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }
            ?? utf8.endIndex
        var authority = url[authorityStart..<authorityEnd]
        // Userinfo is never sent on the request line (the exchange turns it into credentials).
        if let at = authority.utf8.lastIndex(of: UInt8(ascii: "@")) { authority = authority[authority.utf8.index(after: at)...] }
        var host: Substring
        var portText: Substring?
        if authority.utf8.first == UInt8(ascii: "[") {
            guard let close = authority.utf8.firstIndex(of: UInt8(ascii: "]")) else { throw Self.invalid("the IPv6 host has no closing bracket") }
            host = authority[authority.utf8.index(after: authority.startIndex)..<close]
            let rest = authority[authority.utf8.index(after: close)...]
            if rest.utf8.first == UInt8(ascii: ":") { portText = rest.dropFirst() } else if !rest.isEmpty { throw Self.invalid("text follows the IPv6 host") }
        } else if let colon = authority.utf8.lastIndex(of: UInt8(ascii: ":")) {
            host = authority[..<colon]
            portText = authority[authority.utf8.index(after: colon)...]
        } else {
            host = authority
        }
        guard !host.isEmpty else { throw Self.invalid("the URL has no host") }
        var port = isSecure ? 443 : 80
        if let portText, !portText.isEmpty {
            guard let value = Int(portText), (1...65535).contains(value) else { throw Self.invalid("the port is not between 1 and 65535") }
            port = value
        }
        origin = Origin(isSecure: isSecure, host: host.lowercased(), port: port)
        let end = utf8[authorityEnd...].firstIndex(of: UInt8(ascii: "#")) ?? utf8.endIndex
        let rest = url[authorityEnd..<end]
        target = rest.isEmpty ? "/" : rest.utf8.first == UInt8(ascii: "?") ? "/" + rest : String(rest)
    }

    private static func invalid(_ reason: String) -> CourierError {
        CourierError(.invalidRequest([RequestProblem(.invalidURL, reason)]))
    }
}
