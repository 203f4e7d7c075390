import Foundation

/// Encodes values as `application/x-www-form-urlencoded` bodies.
///
/// Pairs are serialized as the WHATWG URL standard's urlencoded serializer does: ASCII letters,
/// digits and `*-._~` are kept, a space becomes `+` (or `%20`, see ``spaceEncoding``), and every
/// other byte of the UTF-8 form is percent-encoded, so `a b+c~` becomes `a+b%2Bc~`.
///
/// `Encodable` values keep the order their `encode(to:)` writes fields in. Nested containers are
/// flattened (`a[b]=1`), arrays follow ``arrayEncoding``, dates ``dateEncoding``, keys
/// ``keyEncoding``, and `nil` values are left out.
public struct FormEncoder: Sendable {
    /// How array elements are named.
    public enum ArrayEncoding: Sendable, Hashable {
        /// `tags[]=a&tags[]=b` (Rails, PHP).
        case brackets
        /// `tags=a&tags=b`.
        case noBrackets
        /// `tags[0]=a&tags[1]=b`.
        case indexed
    }

    /// How booleans are written.
    public enum BoolEncoding: Sendable, Hashable {
        /// `true` / `false`.
        case literal
        /// `1` / `0`.
        case numeric
    }

    /// How dates are written.
    public enum DateEncoding: Sendable {
        /// ISO 8601, for example `2026-11-22T07:00:00Z`.
        case iso8601
        /// Whole or fractional seconds since 1970.
        case secondsSince1970
        /// Milliseconds since 1970.
        case millisecondsSince1970
        /// A custom text form.
        case custom(@Sendable (Date) -> String)
    }

    /// How keys are written.
    public enum KeyEncoding: Sendable {
        /// As declared by the type's coding keys.
        case useDefaultKeys
        /// `userName` becomes `user_name`.
        case convertToSnakeCase
        /// A custom transform of each key.
        case custom(@Sendable (String) -> String)
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
        let root = FormNode()
        try FormValueEncoder.encode(value, into: root, options: self, path: [])
        guard root.kind == .object else {
            throw RequestProblem(.bodyEncodingFailed, "a form body must encode as keyed fields, not a single value or list")
        }
        var pairs: [(String, String)] = []
        for (key, member) in root.members { flatten(member, name: key, into: &pairs) }
        return pairs
    }

    /// The field name for a coding key, after the key strategy.
    func name(for key: String) -> String {
        switch keyEncoding {
        case .useDefaultKeys: key
        case .convertToSnakeCase: Self.snakeCased(key)
        case .custom(let rename): rename(key)
        }
    }

    /// The text for a date, after the date strategy.
    func text(for date: Date) -> String {
        switch dateEncoding {
        case .iso8601: date.formatted(.iso8601)
        case .secondsSince1970: FormEncoder.number(date.timeIntervalSince1970)
        case .millisecondsSince1970: FormEncoder.number((date.timeIntervalSince1970 * 1000).rounded())
        case .custom(let format): format(date)
        }
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    /// `userID` → `user_id`, `URLString` → `url_string`: a word starts at an upper-case letter
    /// that follows a lower-case one, or that precedes a lower-case one after an upper-case run.
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

    private func flatten(_ node: FormNode, name: String, into pairs: inout [(String, String)]) {
        switch node.kind {
        case .unset, .null: break
        case .bool:
            pairs.append((name, boolEncoding == .numeric ? (node.flag ? "1" : "0") : (node.flag ? "true" : "false")))
        case .scalar:
            pairs.append((name, node.scalar))
        case .list:
            for (index, element) in node.list.enumerated() {
                let elementName: String
                switch arrayEncoding {
                case .brackets: elementName = name + "[]"
                case .noBrackets: elementName = name
                case .indexed: elementName = name + "[\(index)]"
                }
                flatten(element, name: elementName, into: &pairs)
            }
        case .object:
            for (key, member) in node.members { flatten(member, name: name + "[" + key + "]", into: &pairs) }
        }
    }

    private func serialize(_ string: String) -> String {
        let encoded = PercentEncoding.encode(string, allowed: .formComponent)
        guard spaceEncoding == .plus, encoded.contains("%20") else { return encoded }
        return encoded.replacingOccurrences(of: "%20", with: "+")
    }
}

extension PercentEncoding.AllowedSet {
    /// The WHATWG urlencoded serializer's kept bytes, plus `~` (unreserved in RFC 3986).
    static let formComponent = PercentEncoding.AllowedSet(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789*-._~")
}
