/// Strict JSON read into values directly from bytes: what ``JSONValue/decode(_:)`` does with text
/// ``JSONSyntax`` accepts. Asking `JSONDecoder` for each value's type in turn costs a thrown error
/// per wrong guess, an order of magnitude more on a large document.
extension JSONValue {
    /// The value of `bytes`, which ``JSONSyntax/isValid(_:maximumDepth:)`` accepted (so nesting
    /// is bounded and every token well formed); `nil` if they were not in fact valid.
    static func parse(valid bytes: [UInt8]) -> JSONValue? {
        var parser = Parser(bytes: bytes)
        guard let value = parser.value() else { return nil }
        parser.skipSpace()
        return parser.index == bytes.count ? value : nil
    }

    private struct Parser {
        let bytes: [UInt8]
        var index = 0

        mutating func skipSpace() {
            while index < bytes.count, JSONSyntax.isSpace(bytes[index]) { index += 1 }
        }

        private mutating func take(_ byte: UInt8) -> Bool {
            skipSpace()
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        mutating func value() -> JSONValue? {
            skipSpace()
            guard index < bytes.count else { return nil }
            switch bytes[index] {
            case UInt8(ascii: "{"):
                index += 1
                var members: [String: JSONValue] = [:]
                if take(UInt8(ascii: "}")) { return .object(members) }
                repeat {
                    skipSpace()
                    guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
                    let name = string()
                    guard take(UInt8(ascii: ":")), let member = value() else { return nil }
                    // The first of two same-named members counts, as for `JSONDecoder`.
                    if members[name] == nil { members[name] = member }
                } while take(UInt8(ascii: ","))
                return take(UInt8(ascii: "}")) ? .object(members) : nil
            case UInt8(ascii: "["):
                index += 1
                var elements: [JSONValue] = []
                if take(UInt8(ascii: "]")) { return .array(elements) }
                repeat {
                    guard let element = value() else { return nil }
                    elements.append(element)
                } while take(UInt8(ascii: ","))
                return take(UInt8(ascii: "]")) ? .array(elements) : nil
            case UInt8(ascii: "\""): return .string(string())
            case UInt8(ascii: "t"): return literal("true", .bool(true))
            case UInt8(ascii: "f"): return literal("false", .bool(false))
            case UInt8(ascii: "n"): return literal("null", .null)
            default: return number()
            }
        }

        private mutating func string() -> String {
            let end = JSONSyntax.stringEnd(bytes, from: index)
            defer { index = end }
            return JSONSyntax.unescaped(bytes[index..<end])
        }

        private mutating func literal(_ text: StaticString, _ value: JSONValue) -> JSONValue? {
            let count = text.utf8CodeUnitCount
            guard index + count <= bytes.count, bytes[index..<index + count].elementsEqual(UnsafeBufferPointer(start: text.utf8Start, count: count))
            else { return nil }
            index += count
            return value
        }

        /// A number: an integer that fits 64 bits as one, anything else as a `Double`.
        private mutating func number() -> JSONValue? {
            let start = index
            var integral = true
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"): break
                case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): integral = false
                default:
                    return Self.number(bytes[start..<index], integral: integral)
                }
                index += 1
            }
            return Self.number(bytes[start..<index], integral: integral)
        }

        private static func number(_ text: ArraySlice<UInt8>, integral: Bool) -> JSONValue? {
            let text = String(decoding: text, as: UTF8.self)
            if integral, let value = Int64(text) { return .integer(value) }
            return Double(text).map(JSONValue.number)
        }
    }
}
