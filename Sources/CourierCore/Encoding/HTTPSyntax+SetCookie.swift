extension HTTPSyntax {
    /// The fields of a `Set-Cookie` value a transport joined with commas (URLSession does), as
    /// `CookieJar.splitJoinedSetCookie(_:)` (CourierCookies) documents: in the core, so that the URLSession
    /// transport splits them before anything else sees them without linking the cookie jar.
    /// - Parameter value: A `Set-Cookie` field value.
    /// - Returns: Each field, trimmed, empty ones left out; `[value]` when nothing was joined.
    package static func splitJoinedSetCookie(_ value: String) -> [String] {
        let bytes = Array(value.utf8)
        guard bytes.contains(UInt8(ascii: ",")) else { return value.isEmpty ? [] : [value] }
        var parts: [String] = []
        var start = 0
        var attributeStart = 0
        var dateCommaSeen = false
        for index in bytes.indices {
            switch bytes[index] {
            case UInt8(ascii: ";"):
                attributeStart = index + 1
                dateCommaSeen = false
            case UInt8(ascii: ","):
                if !dateCommaSeen, isExpiresValue(bytes[attributeStart..<index]) {
                    dateCommaSeen = true
                    continue
                }
                parts.append(String(decoding: bytes[start..<index], as: UTF8.self))
                start = index + 1
                attributeStart = index + 1
                dateCommaSeen = false
            default:
                continue
            }
        }
        parts.append(String(decoding: bytes[start...], as: UTF8.self))
        return parts.map(trimmed).filter { !$0.isEmpty }
    }

    /// Whether `attribute` is the start of an `Expires` attribute's value (`Expires=Wed`): its
    /// name, blanks trimmed and in any letter case, is `expires`, and a value has begun.
    private static func isExpiresValue(_ attribute: ArraySlice<UInt8>) -> Bool {
        guard let equals = attribute.firstIndex(of: UInt8(ascii: "=")) else { return false }
        return asciiLowercased(trimmed(attribute[..<equals])) == "expires"
    }
}
