/// Character-level rules of HTTP syntax ([RFC 9110 §5.6](https://www.rfc-editor.org/rfc/rfc9110#section-5.6)).
package enum HTTPSyntax {
    /// Whether `byte` is a `tchar`: the characters allowed in tokens (methods, header names).
    @inline(__always)
    package static func isTokenByte(_ byte: UInt8) -> Bool {
        // tchar as two 64-bit masks: bit n of `low` is byte n, bit n of `high` is byte 64 + n.
        let low: UInt64 = 0x03FF_6CFA_0000_0000  // ! # $ % & ' * + - . 0-9
        let high: UInt64 = 0x57FF_FFFF_C7FF_FFFE  // A-Z ^ _ ` a-z | ~
        if byte < 64 { return low >> UInt64(byte) & 1 != 0 }
        return byte < 128 && high >> UInt64(byte &- 64) & 1 != 0
    }

    /// Whether `string` is a non-empty token: one call for a module above the core (the cookie
    /// jar), where a call per byte would cross the module boundary.
    package static func isToken(_ string: String) -> Bool {
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
        // One branch-light pass over contiguous bytes for the common, clean value; the message
        // is worked out only when something is wrong.
        @inline(__always) func isAllowed(_ byte: UInt8) -> Bool { byte >= 0x20 ? byte != 0x7F : byte == 0x09 }
        let clean = value.utf8.withContiguousStorageIfAvailable { $0.allSatisfy(isAllowed) } ?? value.utf8.allSatisfy(isAllowed)
        if clean { return nil }
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

    /// The parts of a field value between `separator` bytes, each without surrounding spaces and
    /// tabs. Split on UTF-8 bytes, never on Characters: a separator followed by a combining mark
    /// is one Character, and splitting on Characters would not see it.
    package static func parts(of value: String, separatedBy separator: UInt8) -> [String] {
        value.utf8.split(separator: separator, omittingEmptySubsequences: false).map(trimmed)
    }

    /// `value` without the spaces and tabs around it (optional whitespace, RFC 9110 §5.6.3):
    /// those bytes only, never other Unicode spaces, which a server would read as part of the
    /// value.
    package static func trimmed(_ value: String) -> String { trimmed(value.utf8) }

    /// The generic `trimmed(_:)` for an array's bytes, specialized here: the cookie jar parses
    /// `Set-Cookie` as array slices, and from another module a generic call is not specialized
    /// (a `package` function's body is not inlinable across modules).
    package static func trimmed(_ bytes: ArraySlice<UInt8>) -> String { trimmedBytes(bytes) }

    /// The bytes as text, without the spaces and tabs around them.
    package static func trimmed<Bytes: BidirectionalCollection<UInt8>>(_ bytes: Bytes) -> String { trimmedBytes(bytes) }

    private static func trimmedBytes<Bytes: BidirectionalCollection<UInt8>>(_ bytes: Bytes) -> String {
        guard let first = bytes.firstIndex(where: { $0 != 0x20 && $0 != 0x09 }),
            let last = bytes.lastIndex(where: { $0 != 0x20 && $0 != 0x09 })
        else { return "" }
        return String(decoding: bytes[first...last], as: UTF8.self)
    }

    /// `name=value` split at its first `=` byte, each side without surrounding spaces and tabs;
    /// the value is `nil` when there is no `=`. Bytes, never Characters, for the reason
    /// ``parts(of:separatedBy:)`` gives.
    package static func nameAndValue(of part: String) -> (name: String, value: String?) {
        let bytes = part.utf8
        guard let equals = bytes.firstIndex(of: UInt8(ascii: "=")) else { return (trimmed(bytes[...]), nil) }
        return (trimmed(bytes[..<equals]), trimmed(bytes[bytes.index(after: equals)...]))
    }

    /// ASCII-only lower-casing; HTTP names are ASCII, and this avoids Unicode case mapping.
    package static func asciiLowercased(_ string: String) -> String { lowercasedToken(string).lowered }

    /// `string` lower-cased (ASCII only) and whether it is a token, in one pass over its bytes.
    static func lowercasedToken(_ string: String) -> (lowered: String, isToken: Bool) {
        var source = string
        return source.withUTF8 { bytes -> (String, Bool) in
            var hasUpper = false
            var isToken = !bytes.isEmpty
            for byte in bytes {
                hasUpper = hasUpper || byte &- UInt8(ascii: "A") < 26
                isToken = isToken && isTokenByte(byte)
            }
            // Most names are already lower case, or only their first letters are not.
            guard hasUpper else { return (string, isToken) }
            let lowered = String(unsafeUninitializedCapacity: bytes.count) { buffer in
                for index in 0..<bytes.count {
                    let byte = bytes[index]
                    buffer[index] = byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte
                }
                return bytes.count
            }
            return (lowered, isToken)
        }
    }
}
