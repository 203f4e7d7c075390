import CourierCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension Cookie {
    /// Parses a `Set-Cookie` field value a response to `url` carried, applying the rules a user
    /// agent must before storing it ([RFC 6265 §5.2–5.3](https://www.rfc-editor.org/rfc/rfc6265#section-5.2),
    /// with the parts of RFC 6265bis clients implement).
    ///
    /// Strict where it matters: the name must be a token or empty (a field without `=` is a
    /// nameless value, RFC 6265bis §5.6), no control character anywhere in the field, at most
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
        try self.init(setCookie: setCookie, from: CookieTarget(url), at: now, policy: policy)
    }

    /// Parses a `Set-Cookie` field value from a URL read once for all of a response's fields.
    init(setCookie: String, from target: CookieTarget?, at now: Date, policy: CookieJar.Policy) throws(CookieRejection) {
        guard let target, target.isHTTP else { throw .unsupportedURL }
        // Split on bytes, never on Characters: ";" or "=" followed by a combining mark is one
        // Character, and a Character search would read "a=1;\u{301} admin=1" as one value.
        let bytes = Array(setCookie.utf8)
        // RFC 6265bis §5.6: a control character anywhere, attributes included, voids the field.
        guard !bytes.contains(where: Self.isControl) else { throw .controlCharacter }
        let pairEnd = bytes.firstIndex(of: UInt8(ascii: ";")) ?? bytes.endIndex
        let pair = bytes[..<pairEnd]
        // Without "=", the pair is a value with an empty name (RFC 6265bis §5.6); a name and
        // value both empty is no cookie.
        let equals = pair.firstIndex(of: UInt8(ascii: "="))
        let name = equals.map { HTTPSyntax.trimmed(pair[..<$0]) } ?? ""
        let value = HTTPSyntax.trimmed(equals.map { pair[($0 + 1)...] } ?? pair)
        guard !name.isEmpty || !value.isEmpty else { throw .noNameValuePair }
        // Kept from RFC 6265 rather than 6265bis, on purpose: a name must be a token (or empty),
        // because servers read the Cookie field by RFC 6265's grammar (`cookie-name = token`);
        // a name with a space, a quote or a non-ASCII letter would be misread there, and a
        // rejection now tells the caller why, where a misread cookie later would not.
        guard name.isEmpty || HTTPSyntax.isToken(name) else { throw .invalidName }
        guard name.utf8.count + value.utf8.count <= policy.maximumCookieSize else { throw .tooLarge(limit: policy.maximumCookieSize) }
        // A nameless cookie may not pose as a prefixed one: `__Host-x` alone would be sent as the
        // name and value `__Host-x`, without the prefix's guarantees (RFC 6265bis §5.7). Nor may
        // its value hold "=" (`=admin=1`), which a server would read back as a named cookie: a
        // reason of Courier's, beyond 6265bis.
        if name.isEmpty {
            let lowered = HTTPSyntax.asciiLowercased(value)
            guard !lowered.hasPrefix("__secure-"), !lowered.hasPrefix("__host-") else { throw .prefixRequirementsUnmet }
            guard !value.utf8.contains(UInt8(ascii: "=")) else { throw .invalidName }
        }

        let attributes = Attributes(bytes[pairEnd...], now: now)
        var domain = target.host
        var hostOnly = true
        // The last Domain attribute decides; an empty one makes the cookie host-only (RFC 6265bis
        // §5.7 step 8), as if none was given.
        if let written = attributes.domain, !written.isEmpty {
            // An internationalized name counts in its ASCII form (`bücher.example` is
            // `xn--bcher-kva.example`), the form hosts are compared in.
            guard let named = InternationalHost.ascii(Substring(written)) else { throw .invalidDomain }
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
        // RFC 6265bis §5.7: a SameSite=None cookie must be Secure.
        if attributes.sameSite == SameSite.none && !attributes.secure { throw .sameSiteNoneWithoutSecure }
        let lowered = name.lowercased()
        if lowered.hasPrefix("__secure-") && !(attributes.secure && target.isSecure) { throw .prefixRequirementsUnmet }
        if lowered.hasPrefix("__host-") && !(attributes.secure && target.isSecure && (attributes.domain ?? "").isEmpty && attributes.path == "/") {
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
                    // Kept even when empty: the last Domain attribute decides, and an empty one
                    // means host-only (RFC 6265bis §5.6.3, §5.7).
                    domain = CookieDomain.canonical(value)
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
    /// The cookies in one `Set-Cookie` field value that holds several joined by commas, as a
    /// transport that joins repeated fields hands them over (URLSession does: the URLSession
    /// transport splits them with this before anything else sees them; a transport that hands
    /// fields over apart must never split).
    ///
    /// Every comma separates two fields except the one inside an `Expires` date
    /// (`Expires=Wed, 21 Oct 2037 07:28:00 GMT`): a cookie's value may not hold a comma
    /// (RFC 6265's `cookie-octet`), so in a joined field a comma elsewhere is where the transport
    /// joined two. An invalid field next to a valid one stays apart from it: `a=b` then `=`
    /// arrive as `a=b, =` and split into `a=b` (stored) and `=` (refused), not one cookie `a`
    /// whose value is `b, =`.
    /// - Parameter value: A `Set-Cookie` field value.
    /// - Returns: Each field, trimmed, empty ones left out; `[value]` when nothing was joined.
    public static func splitJoinedSetCookie(_ value: String) -> [String] {
        HTTPSyntax.splitJoinedSetCookie(value)
    }
}
