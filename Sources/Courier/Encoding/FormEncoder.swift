import Foundation

/// Encodes values as `application/x-www-form-urlencoded` bodies.
///
/// Pairs are serialized as the WHATWG URL standard's urlencoded serializer does: ASCII letters,
/// digits and `*-._~` are kept, a space becomes `+` (or `%20`, see ``spaceEncoding``), and every
/// other byte of the UTF-8 form is percent-encoded, so `a b+c~` becomes `a+b%2Bc~`.
///
/// `Encodable` values go through `JSONEncoder` (for its date and key strategies), then nested
/// containers are flattened: `{"a": {"b": 1}}` becomes `a[b]=1`, arrays follow
/// ``arrayEncoding``, and `nil` values are left out.
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
        let encoder = JSONEncoder()
        switch dateEncoding {
        case .iso8601: encoder.dateEncodingStrategy = .iso8601
        case .secondsSince1970: encoder.dateEncodingStrategy = .secondsSince1970
        case .millisecondsSince1970: encoder.dateEncodingStrategy = .millisecondsSince1970
        case .custom(let format):
            encoder.dateEncodingStrategy = .custom { date, encoder in
                var container = encoder.singleValueContainer()
                try container.encode(format(date))
            }
        }
        if case .convertToSnakeCase = keyEncoding { encoder.keyEncodingStrategy = .convertToSnakeCase }
        let json = try encoder.encode(value)
        var parser = OrderedJSONParser(bytes: Array(json))
        let root = try parser.parse()
        guard case .object(let members) = root else {
            throw RequestProblem(.bodyEncodingFailed, "a form body must encode as keyed fields, not a single value or list")
        }
        var pairs: [(String, String)] = []
        for (key, member) in members { flatten(member, name: transform(key), into: &pairs) }
        return pairs
    }

    private func transform(_ key: String) -> String {
        if case .custom(let rename) = keyEncoding { return rename(key) }
        return key
    }

    private func flatten(_ value: OrderedJSONParser.Value, name: String, into pairs: inout [(String, String)]) {
        switch value {
        case .null: break
        case .bool(let flag):
            pairs.append((name, boolEncoding == .numeric ? (flag ? "1" : "0") : (flag ? "true" : "false")))
        case .number(let text), .string(let text):
            pairs.append((name, text))
        case .array(let elements):
            for (index, element) in elements.enumerated() {
                let elementName: String
                switch arrayEncoding {
                case .brackets: elementName = name + "[]"
                case .noBrackets: elementName = name
                case .indexed: elementName = name + "[\(index)]"
                }
                flatten(element, name: elementName, into: &pairs)
            }
        case .object(let members):
            for (key, member) in members { flatten(member, name: name + "[" + transform(key) + "]", into: &pairs) }
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
