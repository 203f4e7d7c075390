#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Checks that a URL string means the same host to every parser that may read it.
///
/// Foundation parses URLs by RFC 3986; browsers, proxies and many servers by the WHATWG URL
/// standard. The two disagree on some inputs: `http://127.0.0.1:1\@localhost:2/` is a request to
/// `localhost:2` for Foundation (which percent-encodes the backslash into the userinfo) and to
/// `127.0.0.1:1` for a WHATWG parser (which reads `\` as `/`). Courier refuses such strings
/// instead of guessing: a URL it sends must have one meaning.
enum URLSyntax {
    /// Resolves a URI reference that a server sent (a `Location` header, a `Link` target, a next
    /// page's URL) against the URL it came from, accepting only what every parser reads alike.
    ///
    /// The decision is made on the reference as the server wrote it, before Foundation resolves
    /// it: FoundationNetworking grafts a host-less `file:///etc/passwd` onto the current origin,
    /// so checking the resolved URL's scheme would be too late. A reference with a scheme must
    /// name `http` or `https` followed by `//`; a relative reference (`/next`, `?page=2`,
    /// `//host/path`) is resolved against `base`.
    /// - Returns: The absolute URL, or why the reference is refused (a reason that reads after
    ///   "the URL", without the URL itself).
    static func resolve(_ reference: String, against base: URL?) -> Result<URL, Refusal> {
        if let defect = defect(inAbsoluteURL: reference) { return .failure(Refusal(reason: defect)) }
        let bytes = Array(reference.utf8)
        if let scheme = schemeLength(bytes) {
            let name = HTTPSyntax.asciiLowercased(String(decoding: bytes[..<scheme], as: UTF8.self))
            guard name == "http" || name == "https" else {
                let shown = name.count <= 16 ? "\"\(name)\"" : "\"\(name.prefix(16))…\""
                return .failure(Refusal(reason: "has scheme \(shown); only http and https are followed"))
            }
            guard bytes.count >= scheme + 3, bytes[scheme + 1] == UInt8(ascii: "/"), bytes[scheme + 2] == UInt8(ascii: "/")
            else { return .failure(Refusal(reason: "names \(name) without an authority (\(name)://host)")) }
        } else if bytes.starts(with: [UInt8(ascii: "/"), UInt8(ascii: "/")]) {
            let authorityEnd =
                bytes[2...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }
                ?? bytes.endIndex
            if let defect = defect(inAuthority: bytes[2..<authorityEnd]) { return .failure(Refusal(reason: defect)) }
        }
        guard let resolved = URL(string: reference, relativeTo: base)?.absoluteURL,
            let scheme = resolved.scheme.map(HTTPSyntax.asciiLowercased), scheme == "http" || scheme == "https",
            let host = resolved.host, !host.isEmpty
        else { return .failure(Refusal(reason: "does not resolve to an absolute http or https URL")) }
        // No DNS name is longer (RFC 1035 §2.3.4, in text form); Foundation's URLComponents
        // gives no host at all for some longer ones, so it could not be put in canonical form.
        guard host.utf8.count <= 253 else {
            return .failure(Refusal(reason: "names a host of \(host.utf8.count) characters (a host name has at most 253)"))
        }
        guard let canonical = lowercasingSchemeAndHost(resolved) else {
            return .failure(Refusal(reason: "does not resolve to an absolute http or https URL"))
        }
        return .success(canonical)
    }

    /// `url` with its scheme and host in lowercase, the canonical form of the two parts RFC 3986
    /// makes case-insensitive (§6.2.2.1), so that every later comparison and every printed URL
    /// sees one spelling; path, query and fragment keep their case.
    private static func lowercasingSchemeAndHost(_ url: URL) -> URL? {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false), components.percentEncodedHost?.isEmpty == false
        else { return nil }
        let scheme = components.scheme.map(HTTPSyntax.asciiLowercased)
        let host = components.percentEncodedHost.map(HTTPSyntax.asciiLowercased)
        if scheme == components.scheme && host == components.percentEncodedHost { return url }
        components.scheme = scheme
        components.percentEncodedHost = host
        return components.url
    }

    /// Why a reference was refused.
    struct Refusal: Error, Hashable {
        /// Reads after "the URL".
        var reason: String
    }

    /// The length of the RFC 3986 scheme at the start of `bytes` (`ALPHA *( ALPHA / DIGIT / "+"
    /// / "-" / "." ) ":"`), or `nil` when the reference has none.
    private static func schemeLength(_ bytes: [UInt8]) -> Int? {
        guard let first = bytes.first, isAlpha(first) else { return nil }
        for (index, byte) in bytes.enumerated().dropFirst() {
            if byte == UInt8(ascii: ":") { return index }
            guard isAlpha(byte) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "+")
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
            else { return nil }
        }
        return nil
    }

    private static func isAlpha(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
    }

    /// Why `string`, an absolute URL, is ambiguous or malformed, or `nil` when it is fine. The
    /// reason reads after "the URL", for example "contains a backslash at byte 21".
    ///
    /// Refused anywhere in the string: whitespace, ASCII control characters and `\`. Refused in
    /// the authority: more than one `@`, `%00`, a port that is not 0–65535 in digits, a host
    /// with characters other than ASCII letters, digits, `-`, `.`, `_` and `~` (or an IPv6
    /// literal in brackets), including percent-escapes and non-ASCII characters.
    static func defect(inAbsoluteURL string: String) -> String? {
        var string = string
        // withUTF8 reads a native string in place: no copy on the builder's path.
        return string.withUTF8 { defect(inAbsoluteURLBytes: $0) }
    }

    private static func defect(inAbsoluteURLBytes bytes: UnsafeBufferPointer<UInt8>) -> String? {
        for (offset, byte) in bytes.enumerated() {
            switch byte {
            case 0x00...0x20, 0x7F:
                return "contains whitespace or a control character at byte \(offset)"
            case UInt8(ascii: "\\"):
                return "contains a backslash at byte \(offset), which URL parsers read differently (as '/' or as data)"
            default: continue
            }
        }
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")),
            bytes.count >= colon + 3, bytes[colon + 1] == UInt8(ascii: "/"), bytes[colon + 2] == UInt8(ascii: "/")
        else { return nil }  // No authority: the scheme and host checks report it.
        let start = colon + 3
        let end =
            bytes[start...].firstIndex {
                $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#")
            } ?? bytes.endIndex
        return defect(inAuthority: ArraySlice(bytes[start..<end]))
    }

    /// Why an authority (`userinfo@host:port`) is ambiguous, or `nil`.
    static func defect(inAuthority authority: ArraySlice<UInt8>) -> String? {
        let ats = authority.indices.filter { authority[$0] == UInt8(ascii: "@") }
        if ats.count > 1 { return "has more than one '@' in its authority, which URL parsers split differently" }
        var hostAndPort = authority
        if let at = ats.first {
            let userinfo = authority[authority.startIndex..<at]
            if containsEncodedNUL(userinfo) { return "has %00 in its userinfo" }
            hostAndPort = authority[(at + 1)...]
        }
        var host = hostAndPort
        var port: ArraySlice<UInt8>?
        if hostAndPort.first == UInt8(ascii: "[") {
            guard let close = hostAndPort.firstIndex(of: UInt8(ascii: "]")) else {
                return "has an IPv6 host with no closing ']'"
            }
            let literal = hostAndPort[(hostAndPort.startIndex + 1)..<close]
            let allowed = literal.allSatisfy { isHexDigit($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") }
            guard allowed, !literal.isEmpty else {
                return "has an IPv6 host with characters other than hexadecimal digits, ':' and '.'"
            }
            host = hostAndPort[hostAndPort.startIndex...close]
            let rest = hostAndPort[(close + 1)...]
            if let first = rest.first {
                guard first == UInt8(ascii: ":") else { return "has characters after its IPv6 host" }
                port = rest.dropFirst()
            }
        } else {
            if let colon = hostAndPort.firstIndex(of: UInt8(ascii: ":")) {
                host = hostAndPort[hostAndPort.startIndex..<colon]
                port = hostAndPort[(colon + 1)...]
            }
            for byte in host where !isHostByte(byte) {
                if byte >= 0x80 {
                    return "has a non-ASCII host that is not a valid internationalized domain name"
                }
                if byte == UInt8(ascii: "%") {
                    return "has a percent-escape in its host, which URL parsers decode differently"
                }
                return "has \(String(UnicodeScalar(byte)).debugDescription) in its host, which is not allowed in a host name"
            }
        }
        if let port, !port.isEmpty {
            guard port.count <= 5, port.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                let value = Int(String(decoding: port, as: UTF8.self)), value <= 65535
            else { return "has a port that is not a number from 0 to 65535" }
        }
        return nil
    }

    private static func isHostByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
            UInt8(ascii: "A")...UInt8(ascii: "F"):
            return true
        default:
            return false
        }
    }

    private static func containsEncodedNUL(_ bytes: ArraySlice<UInt8>) -> Bool {
        var index = bytes.startIndex
        while index + 2 < bytes.endIndex {
            if bytes[index] == UInt8(ascii: "%"), bytes[index + 1] == UInt8(ascii: "0"), bytes[index + 2] == UInt8(ascii: "0") {
                return true
            }
            index += 1
        }
        return false
    }
}

extension URL {
    /// This URL without user name and password.
    func removingUserInfo() -> URL {
        guard user != nil || password != nil,
            var components = URLComponents(url: self, resolvingAgainstBaseURL: false)
        else { return self }
        components.user = nil
        components.password = nil
        return components.url ?? self
    }
}
