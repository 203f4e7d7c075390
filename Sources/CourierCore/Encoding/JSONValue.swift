#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Any JSON value, as Foundation's decoder reads it: for comparing two documents whatever their
/// key order, and for asking whether bytes are JSON at all (in UTF-8, UTF-16 or UTF-32, which the
/// decoder tells apart). FoundationEssentials has no `JSONSerialization`.
package enum JSONValue: Decodable, Equatable {
    case null
    case bool(Bool)
    /// A number without a fraction or exponent that fits 64 bits.
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// The document `data` holds (any value at the top, not only an object or array), or `nil`
    /// when it is not JSON: strict JSON read directly, anything else asked of `JSONDecoder`.
    package static func decode(_ data: Data) -> JSONValue? {
        let bytes = [UInt8](data)
        if JSONSyntax.isValid(bytes) { return parse(valid: bytes) }
        return try? JSONDecoder().decode(JSONValue.self, from: data)
    }

    /// Equal values: objects whatever their key order, and numbers by value (`1` and `1.0`).
    package static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.integer(let a), .integer(let b)): a == b
        case (.integer(let a), .number(let b)), (.number(let b), .integer(let a)): Double(a) == b
        case (.number(let a), .number(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)): a == b
        default: false
        }
    }
}
