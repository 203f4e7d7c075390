#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A value that can be sent as a query parameter: `query("page", 2)`, `query("ids", [1, 2, 3])`,
/// `query("since", date)`.
///
/// A value describes itself as text, a boolean, a date or a list (``QueryRepresentation``);
/// ``QueryEncoding`` then decides how booleans, dates and lists are written. Conform your own
/// types by returning one of those:
///
/// ```swift
/// extension Weekday: QueryValue {
///     var queryRepresentation: QueryRepresentation { .text(rawValue) }
/// }
/// ```
public protocol QueryValue {
    /// The value before a ``QueryEncoding`` is applied.
    var queryRepresentation: QueryRepresentation { get }
}

/// What a ``QueryValue`` is, before ``QueryEncoding`` writes it.
public enum QueryRepresentation: Sendable, Hashable {
    /// Text sent as it is (percent-encoded).
    case text(String)
    /// A boolean, written by ``QueryEncoding/boolEncoding``.
    case bool(Bool)
    /// A date, written by ``QueryEncoding/dateEncoding``.
    case date(Date)
    /// A list, written by ``QueryEncoding/arrayEncoding``; empty adds nothing.
    case list([QueryRepresentation])
    /// Nothing: `nil` adds no parameter.
    case absent
}

extension String: QueryValue {
    /// The string as text.
    public var queryRepresentation: QueryRepresentation { .text(self) }
}

extension Substring: QueryValue {
    /// The substring as text.
    public var queryRepresentation: QueryRepresentation { .text(String(self)) }
}

extension Bool: QueryValue {
    /// A boolean, written by the encoding's ``QueryEncoding/boolEncoding``.
    public var queryRepresentation: QueryRepresentation { .bool(self) }
}

extension Date: QueryValue {
    /// A date, written by the encoding's ``QueryEncoding/dateEncoding`` (ISO 8601 by default).
    public var queryRepresentation: QueryRepresentation { .date(self) }
}

extension Int: QueryValue {
    /// The decimal digits.
    public var queryRepresentation: QueryRepresentation { .text(String(self)) }
}

extension Int64: QueryValue {
    /// The decimal digits.
    public var queryRepresentation: QueryRepresentation { .text(String(self)) }
}

extension Int32: QueryValue {
    /// The decimal digits.
    public var queryRepresentation: QueryRepresentation { .text(String(self)) }
}

extension UInt: QueryValue {
    /// The decimal digits.
    public var queryRepresentation: QueryRepresentation { .text(String(self)) }
}

extension UInt64: QueryValue {
    /// The decimal digits.
    public var queryRepresentation: QueryRepresentation { .text(String(self)) }
}

extension Double: QueryValue {
    /// Swift's shortest round-tripping form, for example `0.1`.
    public var queryRepresentation: QueryRepresentation { .text(description) }
}

extension Float: QueryValue {
    /// Swift's shortest round-tripping form.
    public var queryRepresentation: QueryRepresentation { .text(description) }
}

extension Decimal: QueryValue {
    /// The decimal's description, for example `12.50`.
    public var queryRepresentation: QueryRepresentation { .text(description) }
}

extension UUID: QueryValue {
    /// The upper-case UUID string.
    public var queryRepresentation: QueryRepresentation { .text(uuidString) }
}

extension Array: QueryValue where Element: QueryValue {
    /// A list of the elements.
    public var queryRepresentation: QueryRepresentation { .list(map(\.queryRepresentation)) }
}

extension Optional: QueryValue where Wrapped: QueryValue {
    /// The wrapped value, or nothing for `nil`.
    public var queryRepresentation: QueryRepresentation { self?.queryRepresentation ?? .absent }
}

/// How lists, booleans and dates are written in a query: the strategies ``FormEncoder`` shares.
///
/// Set it per call (`query("ids", ids, encoding: .init(arrayEncoding: .comma))`) or once for a
/// whole API with ``encodingDefaults(query:form:)``.
public struct QueryEncoding: Sendable, Hashable {
    /// How lists are written; ``ArrayEncoding/noBrackets`` (`ids=1&ids=2`) by default.
    public var arrayEncoding: ArrayEncoding
    /// How booleans are written; ``BoolEncoding/literal`` by default.
    public var boolEncoding: BoolEncoding
    /// How dates are written; ``DateEncoding/iso8601`` by default.
    public var dateEncoding: DateEncoding

    /// Creates an encoding.
    /// - Parameters:
    ///   - arrayEncoding: How lists are written.
    ///   - boolEncoding: How booleans are written.
    ///   - dateEncoding: How dates are written.
    public init(
        arrayEncoding: ArrayEncoding = .noBrackets, boolEncoding: BoolEncoding = .literal,
        dateEncoding: DateEncoding = .iso8601
    ) {
        self.arrayEncoding = arrayEncoding
        self.boolEncoding = boolEncoding
        self.dateEncoding = dateEncoding
    }

    /// The query items for `name` and `value`.
    func items(name: String, _ value: QueryRepresentation) -> [QueryItem] {
        guard case .list(let elements) = value else {
            return text(value).map { [QueryItem(name: name, value: $0)] } ?? []
        }
        let texts = elements.flatMap(flattened).compactMap(text)
        switch arrayEncoding {
        case .noBrackets: return texts.map { QueryItem(name: name, value: $0) }
        case .brackets: return texts.map { QueryItem(name: name + "[]", value: $0) }
        case .indexed: return texts.enumerated().map { QueryItem(name: "\(name)[\($0.offset)]", value: $0.element) }
        case .comma:
            guard !texts.isEmpty else { return [] }
            // Each element's own commas are escaped, so only the separators stay bare.
            let joined = texts.map { PercentEncoding.encode($0, allowed: .queryComponent).replacingAll(",", with: "%2C") }
                .joined(separator: ",")
            return [.percentEncoded(name: PercentEncoding.encode(name, allowed: .queryComponent), value: joined)]
        }
    }

    private func flattened(_ value: QueryRepresentation) -> [QueryRepresentation] {
        if case .list(let elements) = value { return elements.flatMap(flattened) }
        return [value]
    }

    private func text(_ value: QueryRepresentation) -> String? {
        switch value {
        case .text(let text): text
        case .bool(let flag): boolEncoding.text(for: flag)
        case .date(let date): dateEncoding.text(for: date)
        case .list, .absent: nil
        }
    }
}
