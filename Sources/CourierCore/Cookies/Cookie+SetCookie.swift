import Foundation

extension Cookie {
    /// Parses a `Set-Cookie` field value a response to `url` carried, applying the rules a user
    /// agent must before storing it ([RFC 6265 §5.2–5.3](https://www.rfc-editor.org/rfc/rfc6265#section-5.2),
    /// with the parts of RFC 6265bis clients implement).
    ///
    /// Strict where it matters: the name must be a token, no control characters, at most
    /// ``CookieJar/Policy/maximumCookieSize`` bytes of name and value; a `Domain` must cover the
    /// host and not be a public suffix; `Secure` and the `__Secure-`/`__Host-` prefixes need a
    /// secure URL. Lenient where servers differ: dates in any form RFC 6265 reads, unknown
    /// attributes and attribute values over 1,024 bytes ignored, the last of a repeated
    /// attribute wins, `Max-Age` over `Expires`. Expiry is capped at 400 days.
    /// - Parameters:
    ///   - setCookie: One `Set-Cookie` field value.
    ///   - url: The URL of the request the response answered (the hop, on a redirect).
    ///   - now: The current time: it dates the cookie and anchors `Max-Age`.
    ///   - policy: Limits and extra public suffixes; the default policy when omitted.
    /// - Throws: ``CookieRejection`` saying which rule the field broke.
    public init(setCookie: String, from url: URL, at now: Date, policy: CookieJar.Policy = CookieJar.Policy()) throws(CookieRejection) {
        guard let target = CookieTarget(url), ["http", "https", "ws", "wss"].contains(url.scheme?.lowercased() ?? "") else {
            throw .unsupportedURL
        }
        // Split on bytes, never on Characters: ";" or "=" followed by a combining mark is one
        // Character, and a Character search would read "a=1;\u{301} admin=1" as one value.
        let bytes = Array(setCookie.utf8)
        let pairEnd = bytes.firstIndex(of: UInt8(ascii: ";")) ?? bytes.endIndex
        let pair = bytes[..<pairEnd]
        guard let equals = pair.firstIndex(of: UInt8(ascii: "=")) else { throw .noNameValuePair }
        let name = HTTPSyntax.trimmed(pair[..<equals])
        let value = HTTPSyntax.trimmed(pair[(equals + 1)...])
        guard !name.isEmpty, name.utf8.allSatisfy(HTTPSyntax.isTokenByte) else { throw .invalidName }
        guard !value.utf8.contains(where: Self.isControl) else { throw .controlCharacter }
        guard name.utf8.count + value.utf8.count <= policy.maximumCookieSize else { throw .tooLarge(limit: policy.maximumCookieSize) }

        let attributes = Attributes(bytes[pairEnd...], now: now)
        var domain = target.host
        var hostOnly = true
        if let named = attributes.domain {
            guard named.utf8.allSatisfy({ $0 < 0x80 }), !named.isEmpty else { throw .invalidDomain }
            if CookieDomain.isPublicSuffix(named, extra: policy.publicSuffixes) {
                guard named == target.host else { throw .publicSuffix }
            } else {
                guard CookieDomain.host(target.host, matches: named, isIP: target.isIP) else { throw .domainMismatch }
                // An IP address has no subdomains: its cookie goes to it alone.
                hostOnly = target.isIP
                domain = named
            }
        }
        if attributes.secure && !target.isSecure { throw .secureFromInsecureOrigin }
        let lowered = name.lowercased()
        if lowered.hasPrefix("__secure-") && !(attributes.secure && target.isSecure) { throw .prefixRequirementsUnmet }
        if lowered.hasPrefix("__host-") && !(attributes.secure && target.isSecure && attributes.domain == nil && attributes.path == "/") {
            throw .prefixRequirementsUnmet
        }
        self.init(
            name: name, value: value, domain: domain, hostOnly: hostOnly,
            path: attributes.path ?? CookiePath.defaultPath(for: target.path), expires: attributes.expires,
            secure: attributes.secure, httpOnly: attributes.httpOnly, sameSite: attributes.sameSite, created: now)
    }

    /// The longest a cookie may live: 400 days, as RFC 6265bis caps `Expires` and `Max-Age`.
    public static let maximumLifetime: TimeInterval = 400 * 86_400

    /// The attributes after the name-value pair, each read as RFC 6265 §5.2 says.
    private struct Attributes {
        var domain: String?
        var path: String?
        var expires: Date?
        var secure = false
        var httpOnly = false
        var sameSite: SameSite?

        init(_ text: ArraySlice<UInt8>, now: Date) {
            var expiresAttribute: Date?
            var maxAge: Date?
            let latest = now.addingTimeInterval(Cookie.maximumLifetime)
            for attribute in text.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: true) {
                let equals = attribute.firstIndex(of: UInt8(ascii: "="))
                // ASCII case only: Unicode case mapping turns some other letters into ASCII ones.
                let name = HTTPSyntax.asciiLowercased(HTTPSyntax.trimmed(attribute[..<(equals ?? attribute.endIndex)]))
                let value = equals.map { HTTPSyntax.trimmed(attribute[($0 + 1)...]) } ?? ""
                // RFC 6265bis §5.6: an attribute value over 1,024 bytes is ignored.
                guard value.utf8.count <= 1024 else { continue }
                switch name {
                case "expires":
                    if let date = CookieDate.parse(value) { expiresAttribute = Swift.min(date, latest) }
                case "max-age":
                    if let seconds = Cookie.maxAge(value) {
                        maxAge = seconds <= 0 ? Date(timeIntervalSince1970: 0) : now.addingTimeInterval(Swift.min(TimeInterval(seconds), Cookie.maximumLifetime))
                    }
                case "domain":
                    // An empty Domain is ignored (RFC 6265bis §5.6.3).
                    if !value.isEmpty { domain = CookieDomain.canonical(value) }
                case "path":
                    path = value.hasPrefix("/") ? value : nil
                case "secure":
                    secure = true
                case "httponly":
                    httpOnly = true
                case "samesite":
                    // `ſtrict` (a long s) upper-cases to `Strict` in Unicode: compared in ASCII case,
                    // it is no SameSite value, as browsers read it.
                    switch HTTPSyntax.asciiLowercased(value) {
                    case "strict": sameSite = .strict
                    case "lax": sameSite = .lax
                    case "none": sameSite = SameSite.none
                    default: sameSite = nil
                    }
                default:
                    continue
                }
            }
            expires = maxAge ?? expiresAttribute
        }
    }

    /// A `Max-Age` value: an optional `-` and digits; larger than `Int` reads as `Int.max`.
    private static func maxAge(_ value: String) -> Int? {
        var digits = Substring(value)
        let negative = digits.first == "-"
        if negative { digits = digits.dropFirst() }
        guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        let magnitude = Int(digits) ?? Int.max
        return negative ? -magnitude : magnitude
    }

    /// A control character, tab excepted (RFC 6265bis §5.6: such a cookie is ignored).
    private static func isControl(_ byte: UInt8) -> Bool {
        (byte < 0x20 && byte != 0x09) || byte == 0x7F
    }
}

extension CookieJar {
    /// The cookies in one `Set-Cookie` field value that may hold several joined by commas, as
    /// URLSession (which joins repeated fields) hands them over.
    ///
    /// A comma starts a new cookie only when what follows it, up to the next `=`, `;` or `,`,
    /// is a token followed by `=`: the comma in `Expires=Wed, 21 Oct 2037 07:28:00 GMT` does
    /// not. Every transport's fields go through this, so a jar stores the same cookies whatever
    /// sent them.
    /// - Parameter value: A `Set-Cookie` field value.
    /// - Returns: Each cookie's `Set-Cookie` string; `[value]` when nothing was joined.
    public static func splitJoinedSetCookie(_ value: String) -> [String] {
        let bytes = Array(value.utf8)
        guard bytes.contains(UInt8(ascii: ",")) else { return value.isEmpty ? [] : [value] }
        var parts: [String] = []
        var start = 0
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: ","), startsCookie(bytes, at: index + 1) {
                parts.append(String(decoding: bytes[start..<index], as: UTF8.self))
                start = index + 1
            }
            index += 1
        }
        parts.append(String(decoding: bytes[start...], as: UTF8.self))
        return parts.map(HTTPSyntax.trimmed).filter { !$0.isEmpty }
    }

    /// Whether `bytes` from `start` hold optional blanks, a token and `=`.
    private static func startsCookie(_ bytes: [UInt8], at start: Int) -> Bool {
        var index = start
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 }
        let tokenStart = index
        while index < bytes.count, HTTPSyntax.isTokenByte(bytes[index]) { index += 1 }
        return index > tokenStart && index < bytes.count && bytes[index] == UInt8(ascii: "=")
    }
}
