/// A URI template ([RFC 6570](https://www.rfc-editor.org/rfc/rfc6570)), all four levels.
///
/// Parse once, expand with values as often as needed. Every operator is supported
/// (`{var}`, `{+var}`, `{#var}`, `{.var}`, `{/var}`, `{;var}`, `{?var}`, `{&var}`), with the
/// explode (`*`) and prefix (`:n`) modifiers, lists and associative arrays. A variable that is
/// missing, `nil`, an empty list or an empty associative array is undefined and expands to
/// nothing.
///
/// ```swift
/// let template = try URITemplate("/users/{id}{?fields*,limit}")
/// try template.expand(["id": 42, "fields": ["name", "email"]])
/// // "/users/42?fields=name&fields=email"
/// ```
public struct URITemplate: Sendable, Hashable, CustomStringConvertible {
    /// A variable's value: a string, a list, an associative array (ordered), or undefined.
    public enum Value: Sendable, Hashable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
        ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral,
        ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
    {
        /// A string (numbers and booleans are written as their text).
        case string(String)
        /// A list of strings.
        case list([String])
        /// Name–value pairs, in order.
        case associative([Pair])
        /// No value: the variable expands to nothing.
        case undefined

        /// One name–value pair of an associative array.
        public struct Pair: Sendable, Hashable {
            /// The name.
            public var name: String
            /// The value.
            public var value: String

            /// Creates a pair.
            /// - Parameters:
            ///   - name: The name.
            ///   - value: The value.
            public init(_ name: String, _ value: String) {
                self.name = name
                self.value = value
            }
        }

        /// Creates a string value.
        public init(stringLiteral value: String) { self = .string(value) }
        /// Creates a string value from an integer.
        public init(integerLiteral value: Int) { self = .string(String(value)) }
        /// Creates a string value from a number.
        public init(floatLiteral value: Double) { self = .string(value.description) }
        /// Creates `true` or `false`.
        public init(booleanLiteral value: Bool) { self = .string(value ? "true" : "false") }
        /// Creates a list; composite elements are flattened into their text.
        public init(arrayLiteral elements: Value...) { self = .list(elements.compactMap(\.scalarText)) }
        /// Creates an associative array, keeping the literal's order.
        public init(dictionaryLiteral elements: (String, Value)...) {
            self = .associative(elements.compactMap { name, value in value.scalarText.map { Pair(name, $0) } })
        }
        /// Creates an undefined value.
        public init(nilLiteral: ()) { self = .undefined }

        /// The text of a scalar, or a comma-joined text of a composite; `nil` when undefined.
        var scalarText: String? {
            switch self {
            case .string(let text): text
            case .list(let items): items.joined(separator: ",")
            case .associative(let pairs): pairs.map { "\($0.name),\($0.value)" }.joined(separator: ",")
            case .undefined: nil
            }
        }

        /// Whether the RFC treats the value as undefined.
        var isUndefined: Bool {
            switch self {
            case .undefined: true
            case .list(let items): items.isEmpty
            case .associative(let pairs): pairs.isEmpty
            case .string: false
            }
        }
    }

    /// Why a template is malformed or cannot be expanded.
    public struct Error: Swift.Error, Sendable, Hashable, CustomStringConvertible {
        /// What is wrong, with the character offset in the template where it was found.
        public var message: String

        /// The message.
        public var description: String { message }
    }

    enum Part: Sendable, Hashable {
        case literal(String)
        case expression(Operator, [VariableSpec])
    }

    struct VariableSpec: Sendable, Hashable {
        var name: String
        var explode: Bool
        var prefix: Int?
    }

    enum Operator: Character, Sendable, Hashable {
        case simple = "\0"
        case reserved = "+"
        case fragment = "#"
        case label = "."
        case pathSegment = "/"
        case pathParameter = ";"
        case query = "?"
        case queryContinuation = "&"

        var first: String {
            switch self {
            case .simple, .reserved: ""
            default: String(rawValue)
            }
        }
        var separator: String {
            switch self {
            case .simple, .reserved, .fragment: ","
            case .query, .queryContinuation: "&"
            default: String(rawValue)
            }
        }
        var named: Bool { self == .pathParameter || self == .query || self == .queryContinuation }
        var ifEmpty: String { self == .query || self == .queryContinuation ? "=" : "" }
        var allowsReserved: Bool { self == .reserved || self == .fragment }
    }

    /// The template text.
    public let template: String
    let parts: [Part]

    /// Parses a template.
    /// - Parameter template: The template, for example `"/users/{id}{?q}"`.
    /// - Throws: ``Error`` when the template is malformed (an unclosed or stray brace, an invalid
    ///   variable name, operator or modifier, or a character not allowed in a literal).
    public init(_ template: String) throws(URITemplate.Error) {
        self.template = template
        self.parts = try Self.parse(template)
    }

    /// The template text.
    public var description: String { template }

    /// Expands the template.
    /// - Parameter variables: The values by variable name; a missing name is undefined.
    /// - Returns: The expanded URI reference.
    /// - Throws: ``Error`` when a prefix modifier is applied to a list or associative array.
    public func expand(_ variables: [String: Value]) throws(URITemplate.Error) -> String {
        var output = ""
        for part in parts {
            switch part {
            case .literal(let text):
                output += text
            case .expression(let op, let specs):
                try Self.expand(op, specs, variables, into: &output)
            }
        }
        return output
    }

    // MARK: Expansion

    private static func expand(
        _ op: Operator, _ specs: [VariableSpec], _ variables: [String: Value], into output: inout String
    ) throws(URITemplate.Error) {
        var first = true
        for spec in specs {
            let value = variables[spec.name] ?? .undefined
            if value.isUndefined { continue }
            output += first ? op.first : op.separator
            first = false
            let allowed: PercentEncoding.AllowedSet = op.allowsReserved ? .templateReserved : .unreserved
            func encode(_ text: String) -> String { encodeValue(text, allowed: allowed, keepEscapes: op.allowsReserved) }

            switch value {
            case .undefined:
                continue
            case .string(let text):
                if op.named {
                    output += spec.name
                    output += text.isEmpty ? op.ifEmpty : "="
                }
                let limited = spec.prefix.map { String(String.UnicodeScalarView(text.unicodeScalars.prefix($0))) } ?? text
                output += encode(limited)
            case .list(let items):
                if spec.prefix != nil {
                    throw Error(message: "the prefix modifier on '\(spec.name)' cannot apply to a list")
                }
                if !spec.explode {
                    if op.named { output += spec.name + "=" }
                    output += items.map(encode).joined(separator: ",")
                } else if op.named {
                    output += items.map { spec.name + ($0.isEmpty ? op.ifEmpty : "=" + encode($0)) }
                        .joined(separator: op.separator)
                } else {
                    output += items.map(encode).joined(separator: op.separator)
                }
            case .associative(let pairs):
                if spec.prefix != nil {
                    throw Error(message: "the prefix modifier on '\(spec.name)' cannot apply to an associative array")
                }
                if !spec.explode {
                    if op.named { output += spec.name + "=" }
                    output += pairs.map { encode($0.name) + "," + encode($0.value) }.joined(separator: ",")
                } else if op.named {
                    output += pairs.map { encode($0.name) + ($0.value.isEmpty ? op.ifEmpty : "=" + encode($0.value)) }
                        .joined(separator: op.separator)
                } else {
                    output += pairs.map { encode($0.name) + "=" + encode($0.value) }.joined(separator: op.separator)
                }
            }
        }
    }

    /// Percent-encodes `text`, keeping bytes in `allowed` and, when `keepEscapes`, valid `%XX`
    /// triplets.
    private static func encodeValue(_ text: String, allowed: PercentEncoding.AllowedSet, keepEscapes: Bool) -> String {
        guard keepEscapes else { return PercentEncoding.encode(text, allowed: allowed) }
        var output = ""
        var bytes = Array(text.utf8)[...]
        var run: [UInt8] = []
        func flush() {
            if !run.isEmpty {
                output += PercentEncoding.encode(String(decoding: run, as: UTF8.self), allowed: allowed)
                run.removeAll()
            }
        }
        while let byte = bytes.popFirst() {
            if byte == UInt8(ascii: "%"), bytes.count >= 2,
                PercentEncoding.isValidEncoded(String(decoding: [byte] + bytes.prefix(2), as: UTF8.self), allowed: allowed)
            {
                flush()
                output += String(decoding: [byte] + bytes.prefix(2), as: UTF8.self)
                bytes.removeFirst(2)
            } else {
                run.append(byte)
            }
        }
        flush()
        return output
    }

    // MARK: Parsing

    private static func parse(_ template: String) throws(URITemplate.Error) -> [Part] {
        var parts: [Part] = []
        var literal = ""
        let scalars = Array(template.unicodeScalars)
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            switch scalar {
            case "{":
                if !literal.isEmpty {
                    parts.append(.literal(literal))
                    literal = ""
                }
                guard let close = scalars[index...].firstIndex(of: "}") else {
                    throw Error(message: "unclosed expression at offset \(index)")
                }
                let body = String(String.UnicodeScalarView(scalars[(index + 1)..<close]))
                parts.append(try parseExpression(body, at: index))
                index = close + 1
                continue
            case "}":
                throw Error(message: "a '}' without a matching '{' at offset \(index)")
            case "%":
                guard index + 2 < scalars.count, isHex(scalars[index + 1]), isHex(scalars[index + 2]) else {
                    throw Error(message: "a '%' not followed by two hex digits at offset \(index)")
                }
                literal += String(String.UnicodeScalarView(scalars[index...(index + 2)]))
                index += 3
                continue
            default:
                guard isLiteral(scalar) else {
                    throw Error(message: "character U+\(String(scalar.value, radix: 16, uppercase: true)) is not allowed in a template at offset \(index)")
                }
                literal += PercentEncoding.encode(String(scalar), allowed: .templateReserved)
            }
            index += 1
        }
        if !literal.isEmpty { parts.append(.literal(literal)) }
        return parts
    }

    private static func parseExpression(_ body: String, at offset: Int) throws(URITemplate.Error) -> Part {
        var text = Substring(body)
        var op = Operator.simple
        if let first = text.first {
            if let parsed = Operator(rawValue: first), parsed != .simple {
                op = parsed
                text.removeFirst()
            } else if "=,!@|".contains(first) {
                throw Error(message: "operator '\(first)' is reserved for future use (offset \(offset))")
            }
        }
        guard !text.isEmpty else { throw Error(message: "empty expression at offset \(offset)") }
        var specs: [VariableSpec] = []
        for rawSpec in text.split(separator: ",", omittingEmptySubsequences: false) {
            var spec = rawSpec
            var explode = false
            var prefix: Int?
            if spec.hasSuffix("*") {
                explode = true
                spec.removeLast()
            } else if let colon = spec.firstIndex(of: ":") {
                let digits = spec[spec.index(after: colon)...]
                guard (1...4).contains(digits.count), digits.first != "0", digits.allSatisfy(\.isASCII),
                    let length = Int(digits)
                else {
                    throw Error(message: "invalid prefix length '\(digits)' at offset \(offset)")
                }
                prefix = length
                spec = spec[..<colon]
            }
            guard isVariableName(spec) else {
                throw Error(message: "invalid variable name '\(spec)' at offset \(offset)")
            }
            specs.append(VariableSpec(name: String(spec), explode: explode, prefix: prefix))
        }
        return .expression(op, specs)
    }

    /// `varname = varchar *( ["."] varchar )`, `varchar = ALPHA / DIGIT / "_" / pct-encoded`.
    private static func isVariableName(_ name: Substring) -> Bool {
        let scalars = Array(name.unicodeScalars)
        guard !scalars.isEmpty, scalars.first != ".", scalars.last != "." else { return false }
        var index = 0
        var previousDot = false
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "%" {
                guard index + 2 < scalars.count, isHex(scalars[index + 1]), isHex(scalars[index + 2]) else { return false }
                index += 3
                previousDot = false
                continue
            }
            if scalar == "." {
                if previousDot { return false }
                previousDot = true
            } else {
                guard scalar.isASCII, scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_" else {
                    return false
                }
                previousDot = false
            }
            index += 1
        }
        return true
    }

    private static func isHex(_ scalar: Unicode.Scalar) -> Bool {
        ("0"..."9").contains(scalar) || ("a"..."f").contains(scalar) || ("A"..."F").contains(scalar)
    }

    /// Literal characters: RFC 6570 §2.1 `literals` plus `'`. The ABNF leaves `'` out, but it is a
    /// URI sub-delimiter, and §3.1 says a literal that is allowed anywhere in a URI is copied as it
    /// is; the public uritemplate-test suite expects `'{var}'` to give `'value'`. Every other
    /// character the ABNF leaves out (controls, space, `"`, `%` outside an escape, `<`, `>`, `\`,
    /// `^`, `` ` ``, `{`, `|`, `}`) is not a URI character at all and is refused.
    private static func isLiteral(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x20, 0x7F, 0x22, 0x25, 0x3C, 0x3E, 0x5C, 0x5E, 0x60, 0x7B, 0x7C, 0x7D: false
        case 0x80...0x9F: false
        default: true
        }
    }
}

extension PercentEncoding.AllowedSet {
    /// Unreserved plus reserved characters (RFC 3986 §2.2): what `+` and `#` expansions keep.
    static let templateReserved = PercentEncoding.AllowedSet(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?#[]@!$&'()*+,;=")
}
