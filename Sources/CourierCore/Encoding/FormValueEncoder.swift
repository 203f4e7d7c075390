#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The tree a form body is flattened from, in the order the value encoded it.
final class FormNode {
    enum Kind { case unset, null, bool, scalar, date, list, object }

    var kind: Kind = .unset
    var flag = false
    var scalar = ""
    var date = Date(timeIntervalSince1970: 0)
    var list: [FormNode] = []
    var members: [(String, FormNode)] = []

    /// An immutable copy, safe to keep in a builder and flatten later with any strategies.
    var tree: FormTree {
        switch kind {
        case .unset, .null: .null
        case .bool: .bool(flag)
        case .scalar: .scalar(scalar)
        case .date: .date(date)
        case .list: .list(list.map(\.tree))
        case .object: .object(members.map { ($0.0, $0.1.tree) })
        }
    }
}

/// A value encoded for a form, before any strategy is applied: keys as declared, dates as
/// dates, booleans as booleans. ``FormEncoder`` turns it into fields.
indirect enum FormTree: Sendable {
    case null
    case bool(Bool)
    case scalar(String)
    case date(Date)
    case list([FormTree])
    case object([(String, FormTree)])
}

/// An `Encoder` that records a value as a ``FormNode`` tree; ``FormEncoder`` applies its key,
/// date, bool and array strategies when it flattens the tree. Field order is the order
/// `encode(to:)` writes them in.
struct FormValueEncoder: Encoder {
    let node: FormNode
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if node.kind != .object {
            node.kind = .object
            node.members = []
        }
        return KeyedEncodingContainer(KeyedContainer<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if node.kind != .list {
            node.kind = .list
            node.list = []
        }
        return UnkeyedContainer(encoder: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleContainer(encoder: self)
    }

    /// Encodes `value` into `node`, keeping dates as dates and giving URLs, `Data` and `Decimal`
    /// their text forms.
    static func encode<T: Encodable>(_ value: T, into node: FormNode, path: [any CodingKey])
        throws
    {
        switch value {
        case let date as Date:
            node.kind = .date
            node.date = date
        case let url as URL:
            node.kind = .scalar
            node.scalar = url.absoluteString
        case let data as Data:
            node.kind = .scalar
            node.scalar = data.base64EncodedString()
        case let decimal as Decimal:
            node.kind = .scalar
            node.scalar = decimal.description
        default:
            try value.encode(to: FormValueEncoder(node: node, codingPath: path))
        }
    }

    func child(_ key: any CodingKey) -> FormValueEncoder {
        FormValueEncoder(node: FormNode(), codingPath: codingPath + [key])
    }

    struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let encoder: FormValueEncoder
        var codingPath: [any CodingKey] { encoder.codingPath }

        private func add(_ key: Key) -> FormNode {
            let node = FormNode()
            encoder.node.members.append((key.stringValue, node))
            return node
        }

        mutating func encodeNil(forKey key: Key) throws { add(key).kind = .null }

        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            try FormValueEncoder.encode(value, into: add(key), path: codingPath + [key])
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
            -> KeyedEncodingContainer<NestedKey>
        {
            FormValueEncoder(node: add(key), codingPath: codingPath + [key])
                .container(keyedBy: keyType)
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            FormValueEncoder(node: add(key), codingPath: codingPath + [key]).unkeyedContainer()
        }

        mutating func superEncoder() -> any Encoder {
            FormValueEncoder(node: encoder.node, codingPath: codingPath)
        }

        mutating func superEncoder(forKey key: Key) -> any Encoder {
            FormValueEncoder(node: add(key), codingPath: codingPath + [key])
        }
    }

    struct UnkeyedContainer: UnkeyedEncodingContainer {
        let encoder: FormValueEncoder
        var codingPath: [any CodingKey] { encoder.codingPath }
        var count: Int { encoder.node.list.count }

        private func add() -> FormNode {
            let node = FormNode()
            encoder.node.list.append(node)
            return node
        }

        private var nextKey: any CodingKey { IndexKey(index: count) }

        mutating func encodeNil() throws { add().kind = .null }

        mutating func encode<T: Encodable>(_ value: T) throws {
            let key = nextKey
            try FormValueEncoder.encode(value, into: add(), path: codingPath + [key])
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
            -> KeyedEncodingContainer<NestedKey>
        {
            let key = nextKey
            return FormValueEncoder(node: add(), codingPath: codingPath + [key])
                .container(keyedBy: keyType)
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            let key = nextKey
            return FormValueEncoder(node: add(), codingPath: codingPath + [key])
                .unkeyedContainer()
        }

        mutating func superEncoder() -> any Encoder {
            let key = nextKey
            return FormValueEncoder(node: add(), codingPath: codingPath + [key])
        }
    }

    struct SingleContainer: SingleValueEncodingContainer {
        let encoder: FormValueEncoder
        var codingPath: [any CodingKey] { encoder.codingPath }

        private func set(_ text: String) {
            encoder.node.kind = .scalar
            encoder.node.scalar = text
        }

        private func setFloatingPoint<F: BinaryFloatingPoint & LosslessStringConvertible>(_ value: F) throws {
            guard value.isFinite else {
                throw EncodingError.invalidValue(
                    value, .init(codingPath: codingPath, debugDescription: "\(value) cannot be written in a form body"))
            }
            set(value.description)
        }

        mutating func encodeNil() throws { encoder.node.kind = .null }
        mutating func encode(_ value: Bool) throws {
            encoder.node.kind = .bool
            encoder.node.flag = value
        }
        mutating func encode(_ value: String) throws { set(value) }
        mutating func encode(_ value: Double) throws { try setFloatingPoint(value) }
        mutating func encode(_ value: Float) throws { try setFloatingPoint(value) }
        mutating func encode(_ value: Int) throws { set(String(value)) }
        mutating func encode(_ value: Int8) throws { set(String(value)) }
        mutating func encode(_ value: Int16) throws { set(String(value)) }
        mutating func encode(_ value: Int32) throws { set(String(value)) }
        mutating func encode(_ value: Int64) throws { set(String(value)) }
        mutating func encode(_ value: UInt) throws { set(String(value)) }
        mutating func encode(_ value: UInt8) throws { set(String(value)) }
        mutating func encode(_ value: UInt16) throws { set(String(value)) }
        mutating func encode(_ value: UInt32) throws { set(String(value)) }
        mutating func encode(_ value: UInt64) throws { set(String(value)) }
        mutating func encode<T: Encodable>(_ value: T) throws {
            try FormValueEncoder.encode(value, into: encoder.node, path: codingPath)
        }
    }

    struct IndexKey: CodingKey {
        var index: Int
        var stringValue: String { String(index) }
        var intValue: Int? { index }
        init(index: Int) { self.index = index }
        init?(stringValue: String) { nil }
        init?(intValue: Int) { self.index = intValue }
    }
}
