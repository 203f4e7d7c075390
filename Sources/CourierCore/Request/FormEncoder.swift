#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Encodes values as `application/x-www-form-urlencoded` bodies.
///
/// Pairs are serialized as the WHATWG URL standard's urlencoded serializer does: ASCII letters,
/// digits and `*-._~` are kept, a space becomes `+` (or `%20`, see ``spaceEncoding``), and every
/// other byte of the UTF-8 form is percent-encoded, so `a b+c~` becomes `a+b%2Bc~`.
///
/// `Encodable` values keep the order their `encode(to:)` writes fields in. Nested containers are
/// flattened (`a[b]=1`), arrays follow ``arrayEncoding``, dates ``dateEncoding``, keys
/// ``keyEncoding``, and `nil` values are left out.
public struct FormEncoder: Sendable, Hashable {
    /// How list elements are named: the strategy queries share (``Courier/ArrayEncoding``).
    public typealias ArrayEncoding = CourierCore.ArrayEncoding
    /// How booleans are written (``Courier/BoolEncoding``).
    public typealias BoolEncoding = CourierCore.BoolEncoding
    /// How dates are written (``Courier/DateEncoding``).
    public typealias DateEncoding = CourierCore.DateEncoding

    /// How keys are written.
    public enum KeyEncoding: Sendable, Hashable {
        /// As declared by the type's coding keys.
        case useDefaultKeys
        /// `userName` becomes `user_name`.
        case convertToSnakeCase
        /// A custom transform of each key.
        case custom(@Sendable (String) -> String)

        /// Two custom transforms compare equal: closures cannot be compared.
        public static func == (lhs: KeyEncoding, rhs: KeyEncoding) -> Bool {
            switch (lhs, rhs) {
            case (.useDefaultKeys, .useDefaultKeys), (.convertToSnakeCase, .convertToSnakeCase), (.custom, .custom): true
            default: false
            }
        }

        public func hash(into hasher: inout Hasher) {
            switch self {
            case .useDefaultKeys: hasher.combine(0)
            case .convertToSnakeCase: hasher.combine(1)
            case .custom: hasher.combine(2)
            }
        }
    }

    /// How spaces are written.
    public enum SpaceEncoding: Sendable, Hashable {
        /// `+`, as HTML forms send them.
        case plus
        /// `%20`.
        case percent20
    }

    /// How array elements are named; `.brackets` by default.
    public var arrayEncoding: ArrayEncoding
    /// How booleans are written; `.literal` by default.
    public var boolEncoding: BoolEncoding
    /// How dates are written; `.iso8601` by default.
    public var dateEncoding: DateEncoding
    /// How keys are written; `.useDefaultKeys` by default.
    public var keyEncoding: KeyEncoding
    /// How spaces are written; `.plus` by default.
    public var spaceEncoding: SpaceEncoding

    /// Creates an encoder.
    /// - Parameters:
    ///   - arrayEncoding: How array elements are named.
    ///   - boolEncoding: How booleans are written.
    ///   - dateEncoding: How dates are written.
    ///   - keyEncoding: How keys are written.
    ///   - spaceEncoding: How spaces are written.
    public init(
        arrayEncoding: ArrayEncoding = .brackets, boolEncoding: BoolEncoding = .literal,
        dateEncoding: DateEncoding = .iso8601, keyEncoding: KeyEncoding = .useDefaultKeys,
        spaceEncoding: SpaceEncoding = .plus
    ) {
        self.arrayEncoding = arrayEncoding
        self.boolEncoding = boolEncoding
        self.dateEncoding = dateEncoding
        self.keyEncoding = keyEncoding
        self.spaceEncoding = spaceEncoding
    }

    /// Serializes name–value pairs, in order.
    /// - Parameter pairs: Unencoded names and values.
    /// - Returns: The body bytes.
    public func encode(pairs: [(String, String)]) -> Data {
        var output = ""
        for (index, pair) in pairs.enumerated() {
            if index > 0 { output += "&" }
            output += serialize(pair.0)
            output += "="
            output += serialize(pair.1)
        }
        return Data(output.utf8)
    }

    /// Encodes an `Encodable` value (a struct or dictionary at the top level).
    /// - Parameter value: The value.
    /// - Returns: The body bytes.
    /// - Throws: `EncodingError` when the value cannot be encoded, or a ``RequestProblem`` when its
    ///   top level is not a keyed container.
    public func encode(_ value: some Encodable) throws -> Data {
        try encode(pairs: pairs(for: value))
    }

    /// The flattened name–value pairs for an `Encodable` value.
    /// - Parameter value: The value.
    /// - Returns: The pairs, in the order the value encoded them.
    /// - Throws: As ``encode(_:)``.
    public func pairs(for value: some Encodable) throws -> [(String, String)] {
        pairs(for: try Self.tree(for: value))
    }

    /// Encodes `value` into a tree that no strategy has touched yet.
    /// - Throws: ``RequestProblem`` when the value is not keyed fields, or the value's error.
    static func tree(for value: some Encodable) throws -> FormTree {
        let root = FormNode()
        try FormValueEncoder.encode(value, into: root, path: [])
        guard root.kind == .object else {
            throw RequestProblem(.bodyEncodingFailed, "a form body must encode as keyed fields, not a single value or list")
        }
        return root.tree
    }

    /// The fields of an encoded tree under this encoder's strategies.
    func pairs(for tree: FormTree) -> [(String, String)] {
        var pairs: [(String, String)] = []
        if case .object(let members) = tree {
            for (key, member) in members { flatten(member, name: name(for: key), into: &pairs) }
        }
        return pairs
    }

    func name(for key: String) -> String {
        switch keyEncoding {
        case .useDefaultKeys: key
        case .convertToSnakeCase: Self.snakeCased(key)
        case .custom(let rename): rename(key)
        }
    }

    /// The text for a date, after the date strategy.
    static func snakeCased(_ key: String) -> String {
        let characters = Array(key)
        var output = ""
        for (index, character) in characters.enumerated() {
            if character.isUppercase, index > 0 {
                let previous = characters[index - 1]
                let nextIsLower = index + 1 < characters.count && characters[index + 1].isLowercase
                if previous.isLowercase || previous.isNumber || (previous.isUppercase && nextIsLower) {
                    output += "_"
                }
            }
            output += character.lowercased()
        }
        return output
    }

    private func flatten(_ node: FormTree, name: String, into pairs: inout [(String, String)]) {
        switch node {
        case .null: break
        case .bool(let flag): pairs.append((name, boolEncoding.text(for: flag)))
        case .scalar(let text): pairs.append((name, text))
        case .date(let date): pairs.append((name, dateEncoding.text(for: date)))
        case .list(let elements):
            if arrayEncoding == .comma {
                var texts: [(String, String)] = []
                for element in elements { flatten(element, name: name, into: &texts) }
                if !texts.isEmpty {
                    pairs.append((name, texts.map(\.1).joined(separator: ",")))
                }
                return
            }
            for (index, element) in elements.enumerated() {
                let elementName: String
                switch arrayEncoding {
                case .brackets: elementName = name + "[]"
                case .noBrackets, .comma: elementName = name
                case .indexed: elementName = name + "[\(index)]"
                }
                flatten(element, name: elementName, into: &pairs)
            }
        case .object(let members):
            for (key, member) in members { flatten(member, name: name + "[" + self.name(for: key) + "]", into: &pairs) }
        }
    }

    private func serialize(_ string: String) -> String {
        let encoded = PercentEncoding.encode(string, allowed: .formComponent)
        guard spaceEncoding == .plus, encoded.contains("%20") else { return encoded }
        return encoded.replacingAll("%20", with: "+")
    }
}

extension PercentEncoding.AllowedSet {
    /// The WHATWG urlencoded serializer's kept bytes, plus `~` (unreserved in RFC 3986).
    static let formComponent = PercentEncoding.AllowedSet(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789*-._~")
}
