#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// JSON's grammar (RFC 8259) checked on bytes, without building any value: a quick way to
/// know that a body is JSON before treating it as JSON.
enum JSONSyntax {
    /// Whether `text` is exactly one JSON value (an object, array, string, number, `true`,
    /// `false` or `null`) with nothing but whitespace around it, nested at most
    /// `maximumDepth` deep. Strict: a byte-order mark, a leading zero, a trailing comma, a
    /// comment or a raw control character in a string is not JSON. The text is read once,
    /// with no recursion, however deep it nests.
    static func isValid(_ text: [UInt8], maximumDepth: Int = 512) -> Bool {
        text.withUnsafeBufferPointer { bytes in
            var reader = Reader(bytes: bytes)
            return reader.readDocument(maximumDepth: maximumDepth)
        }
    }

    /// The value of an ASCII hexadecimal digit (either case), or `nil`.
    static func hexDigitValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        private mutating func skipSpace() {
            while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
        }

        private mutating func take(_ byte: UInt8) -> Bool {
            guard current == byte else { return false }
            index += 1
            return true
        }

        mutating func readDocument(maximumDepth: Int) -> Bool {
            // The open containers, innermost last: `{` or `[`.
            var open: [UInt8] = []
            skipSpace()
            while true {
                // A value.
                guard let byte = current else { return false }
                switch byte {
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    index += 1
                    skipSpace()
                    let close = byte == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
                    if take(close) { break }
                    guard open.count < maximumDepth else { return false }
                    open.append(byte)
                    if byte == UInt8(ascii: "{") {
                        guard readKey() else { return false }
                    }
                    continue
                case UInt8(ascii: "\""):
                    guard readString() else { return false }
                case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                    guard readNumber() else { return false }
                case UInt8(ascii: "t"):
                    guard readLiteral("true") else { return false }
                case UInt8(ascii: "f"):
                    guard readLiteral("false") else { return false }
                case UInt8(ascii: "n"):
                    guard readLiteral("null") else { return false }
                default:
                    return false
                }
                // After a value: the end of the text, a comma, or the end of containers.
                while true {
                    skipSpace()
                    guard let container = open.last else { return index == bytes.count }
                    if take(UInt8(ascii: ",")) {
                        skipSpace()
                        if container == UInt8(ascii: "{") {
                            guard readKey() else { return false }
                        }
                        break
                    }
                    guard take(container == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")) else { return false }
                    open.removeLast()
                }
            }
        }

        /// A member's name and its colon, and the space up to its value.
        private mutating func readKey() -> Bool {
            guard current == UInt8(ascii: "\""), readString() else { return false }
            skipSpace()
            guard take(UInt8(ascii: ":")) else { return false }
            skipSpace()
            return true
        }

        /// A string, from its opening quote (the text is valid UTF-8: only escapes and control
        /// characters are checked).
        private mutating func readString() -> Bool {
            index += 1
            while let byte = current {
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return true
                case UInt8(ascii: "\\"):
                    guard let escaped = current else { return false }
                    index += 1
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                        UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        continue
                    case UInt8(ascii: "u"):
                        // A surrogate only as half of a pair: alone, no reader can decode it.
                        guard let unit = readHexUnit() else { return false }
                        if (0xDC00...0xDFFF).contains(unit) { return false }
                        if (0xD800...0xDBFF).contains(unit) {
                            guard take(UInt8(ascii: "\\")), take(UInt8(ascii: "u")), let low = readHexUnit(),
                                (0xDC00...0xDFFF).contains(low)
                            else { return false }
                        }
                    default:
                        return false
                    }
                case 0x00..<0x20:
                    return false
                default:
                    continue
                }
            }
            return false
        }

        /// Four hex digits, as a UTF-16 code unit.
        private mutating func readHexUnit() -> UInt16? {
            var unit: UInt16 = 0
            for _ in 0..<4 {
                guard let digit = current, let value = JSONSyntax.hexDigitValue(digit) else { return nil }
                unit = unit << 4 | UInt16(value)
                index += 1
            }
            return unit
        }

        /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, and a finite `Double`: a
        /// number too large for one (`1e400`) is one no reader can take.
        private mutating func readNumber() -> Bool {
            let start = index
            guard readNumberSyntax() else { return false }
            // Only a long number or one with an exponent can overflow.
            let text = bytes[start..<index]
            guard text.count > 15 || text.contains(where: { $0 | 0x20 == UInt8(ascii: "e") }) else { return true }
            return Double(String(decoding: text, as: UTF8.self))?.isFinite ?? false
        }

        private mutating func readNumberSyntax() -> Bool {
            _ = take(UInt8(ascii: "-"))
            if !take(UInt8(ascii: "0")) {
                guard readDigits() else { return false }
            }
            if take(UInt8(ascii: ".")) {
                guard readDigits() else { return false }
            }
            if take(UInt8(ascii: "e")) || take(UInt8(ascii: "E")) {
                if !take(UInt8(ascii: "+")) { _ = take(UInt8(ascii: "-")) }
                guard readDigits() else { return false }
            }
            return true
        }

        /// One or more digits.
        private mutating func readDigits() -> Bool {
            let start = index
            while let byte = current, byte &- UInt8(ascii: "0") < 10 { index += 1 }
            return index > start
        }

        private mutating func readLiteral(_ literal: StaticString) -> Bool {
            let count = literal.utf8CodeUnitCount
            guard bytes.count - index >= count else { return false }
            for offset in 0..<count where bytes[index + offset] != literal.utf8Start[offset] { return false }
            index += count
            return true
        }
    }

    // MARK: Lexing, for the redactor (which reads JSON as bytes, never parsing it whole)

    /// The index just past the string literal starting at `start` (or the end of the text).
    static func stringEnd(_ bytes: [UInt8], from start: Int) -> Int {
        var index = start + 1
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\\"): index += 2
            case UInt8(ascii: "\""): return index + 1
            default: index += 1
            }
        }
        return bytes.count
    }

    /// The index just past the JSON value starting at `start`: a string, an object or array
    /// (brackets matched outside strings), or a bare number or literal.
    static func valueEnd(_ bytes: [UInt8], from start: Int) -> Int {
        guard start < bytes.count else { return start }
        switch bytes[start] {
        case UInt8(ascii: "\""):
            return stringEnd(bytes, from: start)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            var index = start
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\""):
                    index = stringEnd(bytes, from: index)
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 { return index + 1 }
                default: break
                }
                index += 1
            }
            return bytes.count
        default:
            var index = start
            while index < bytes.count, ![UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]")].contains(bytes[index]),
                !isSpace(bytes[index])
            {
                index += 1
            }
            return index
        }
    }

    static func isSpace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\t")
    }

    /// The text of a JSON string literal (quotes included, possibly unterminated).
    static func unescaped(_ literal: ArraySlice<UInt8>) -> String {
        var body = literal.dropFirst()
        if body.last == UInt8(ascii: "\""), !body.isEmpty { body = body.dropLast() }
        guard body.contains(UInt8(ascii: "\\")) else { return String(decoding: body, as: UTF8.self) }
        let quoted = Data([UInt8(ascii: "\"")] + body + [UInt8(ascii: "\"")])
        if let decoded = try? JSONDecoder().decode(String.self, from: quoted) { return decoded }
        return String(decoding: body, as: UTF8.self)
    }

    /// `text` as a JSON string literal.
    static func escaped(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case "\u{0}"..."\u{1F}": result += "\\u" + String(repeating: "0", count: scalar.value < 0x10 ? 3 : 2) + String(scalar.value, radix: 16)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
