/// Character-level rules of HTTP syntax ([RFC 9110 §5.6](https://www.rfc-editor.org/rfc/rfc9110#section-5.6)).
enum HTTPSyntax {
    /// Whether `byte` is a `tchar`: the characters allowed in tokens (methods, header names).
    @inline(__always)
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"),
            UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
            UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// Whether `string` is a non-empty token.
    static func isToken(_ string: String) -> Bool {
        var count = 0
        for byte in string.utf8 {
            guard isTokenByte(byte) else { return false }
            count += 1
        }
        return count > 0
    }

    /// Why a header value is unacceptable, or `nil` when it is fine.
    ///
    /// Policy: CR, LF and NUL are rejected (they would split or truncate the header block), as are
    /// other ASCII control characters except horizontal tab. Non-ASCII characters are allowed and
    /// sent as UTF-8 bytes: RFC 9110 calls them `obs-text`, servers generally pass them through,
    /// and rejecting them would make valid real-world values (names, filenames) unsendable.
    static func headerValueDefect(_ value: String) -> String? {
        var offset = 0
        for byte in value.utf8 {
            switch byte {
            case 0x0D: return "contains a carriage return (CR) at byte \(offset)"
            case 0x0A: return "contains a line feed (LF) at byte \(offset)"
            case 0x00: return "contains a NUL byte at byte \(offset)"
            case 0x09: break
            case 0x01...0x1F, 0x7F: return "contains control character 0x\(String(byte, radix: 16)) at byte \(offset)"
            default: break
            }
            offset += 1
        }
        return nil
    }

    /// ASCII-only lower-casing; HTTP names are ASCII, and this avoids Unicode case mapping.
    static func asciiLowercased(_ string: String) -> String {
        var source = string
        let lowered = source.withUTF8 { bytes -> String? in
            // Most names are already lower case, or only their first letters are not.
            guard bytes.contains(where: { $0 &- UInt8(ascii: "A") < 26 }) else { return nil }
            return String(unsafeUninitializedCapacity: bytes.count) { buffer in
                for index in 0..<bytes.count {
                    let byte = bytes[index]
                    buffer[index] = byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte
                }
                return bytes.count
            }
        }
        return lowered ?? string
    }
}
