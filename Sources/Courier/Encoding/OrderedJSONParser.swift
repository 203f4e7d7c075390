/// A small JSON reader that keeps object members in document order and numbers as written.
///
/// Used to flatten `JSONEncoder` output into form fields; Foundation's `JSONSerialization` loses
/// member order and cannot tell `true` from `1` on every platform.
struct OrderedJSONParser {
    indirect enum Value: Equatable {
        case null
        case bool(Bool)
        case number(String)
        case string(String)
        case array([Value])
        case object([(String, Value)])

        static func == (lhs: Value, rhs: Value) -> Bool {
            switch (lhs, rhs) {
            case (.null, .null): true
            case (.bool(let a), .bool(let b)): a == b
            case (.number(let a), .number(let b)), (.string(let a), .string(let b)): a == b
            case (.array(let a), .array(let b)): a == b
            case (.object(let a), .object(let b)): a.map(\.0) == b.map(\.0) && a.map(\.1) == b.map(\.1)
            default: false
            }
        }
    }

    private let bytes: [UInt8]
    private var index = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func parse() throws(RequestProblem) -> Value {
        let value = try parseValue(depth: 0)
        skipWhitespace()
        guard index == bytes.count else { throw malformed("trailing characters") }
        return value
    }

    private func malformed(_ detail: String) -> RequestProblem {
        RequestProblem(.bodyEncodingFailed, "the encoded value is not valid JSON (\(detail))")
    }

    private mutating func skipWhitespace() {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
    }

    private mutating func parseValue(depth: Int) throws(RequestProblem) -> Value {
        guard depth < 512 else { throw malformed("nested too deeply") }
        skipWhitespace()
        guard index < bytes.count else { throw malformed("unexpected end") }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            index += 1
            var members: [(String, Value)] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            }
            while true {
                skipWhitespace()
                let key = try parseString()
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw malformed("expected ':'") }
                index += 1
                members.append((key, try parseValue(depth: depth + 1)))
                skipWhitespace()
                guard index < bytes.count else { throw malformed("unexpected end") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                guard bytes[index] == UInt8(ascii: "}") else { throw malformed("expected '}'") }
                index += 1
                return .object(members)
            }
        case UInt8(ascii: "["):
            index += 1
            var elements: [Value] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            }
            while true {
                elements.append(try parseValue(depth: depth + 1))
                skipWhitespace()
                guard index < bytes.count else { throw malformed("unexpected end") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                guard bytes[index] == UInt8(ascii: "]") else { throw malformed("expected ']'") }
                index += 1
                return .array(elements)
            }
        case UInt8(ascii: "\""):
            return .string(try parseString())
        case UInt8(ascii: "t"):
            try expect("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expect("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expect("null")
            return .null
        default:
            let start = index
            while index < bytes.count, "+-0123456789.eE".utf8.contains(bytes[index]) { index += 1 }
            guard index > start else { throw malformed("unexpected character") }
            return .number(String(decoding: bytes[start..<index], as: UTF8.self))
        }
    }

    private mutating func expect(_ word: String) throws(RequestProblem) {
        let word = Array(word.utf8)
        guard index + word.count <= bytes.count, Array(bytes[index..<index + word.count]) == word else {
            throw malformed("unexpected literal")
        }
        index += word.count
    }

    private mutating func parseString() throws(RequestProblem) -> String {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw malformed("expected a string") }
        index += 1
        var output: [UInt8] = []
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(decoding: output, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { throw malformed("unexpected end") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "n"): output.append(0x0A)
                case UInt8(ascii: "t"): output.append(0x09)
                case UInt8(ascii: "r"): output.append(0x0D)
                case UInt8(ascii: "b"): output.append(0x08)
                case UInt8(ascii: "f"): output.append(0x0C)
                case UInt8(ascii: "u"):
                    var scalar = try parseHex4()
                    if (0xD800..<0xDC00).contains(scalar), index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                        bytes[index + 1] == UInt8(ascii: "u")
                    {
                        index += 2
                        let low = try parseHex4()
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    let character = Unicode.Scalar(scalar).map(Character.init) ?? "\u{FFFD}"
                    output.append(contentsOf: Array(String(character).utf8))
                default: output.append(escape)
                }
            default:
                output.append(byte)
            }
        }
        throw malformed("unterminated string")
    }

    private mutating func parseHex4() throws(RequestProblem) -> UInt32 {
        guard index + 4 <= bytes.count, let value = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16)
        else { throw malformed("bad \\u escape") }
        index += 4
        return value
    }
}
