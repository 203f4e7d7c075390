#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// How a list is written in a query or a form: one of the strategies ``QueryEncoding`` and
/// ``FormEncoder`` share.
public enum ArrayEncoding: Sendable, Hashable {
    /// `tags[]=a&tags[]=b` (Rails, PHP); the form default.
    case brackets
    /// `tags=a&tags=b`: the name repeated; the query default.
    case noBrackets
    /// `tags[0]=a&tags[1]=b`.
    case indexed
    /// `tags=a,b`: one field, elements joined by commas (OpenAPI's `form` style without
    /// `explode`). In a query an element's own commas are sent as `%2C`, so they stay apart
    /// from the separators; in a form body the whole value is encoded at once, so they cannot.
    case comma

    /// The same as ``noBrackets``: the name repeated for each element.
    public static var repeated: ArrayEncoding { .noBrackets }
}

/// How a boolean is written in a query or a form.
public enum BoolEncoding: Sendable, Hashable {
    /// `true` / `false`; the default.
    case literal
    /// `1` / `0`.
    case numeric
}

/// How a date is written in a query or a form.
public enum DateEncoding: Sendable, Hashable {
    /// ISO 8601 in UTC, for example `2026-11-22T07:00:00Z`; the default.
    case iso8601
    /// Whole or fractional seconds since 1970.
    case secondsSince1970
    /// Whole milliseconds since 1970.
    case millisecondsSince1970
    /// Your own text form, for example a `DateFormatter`'s (`.custom { formatter.string(from: $0) }`).
    /// Two custom strategies compare equal: closures cannot be compared.
    case custom(@Sendable (Date) -> String)

    /// The text for `date`.
    public func text(for date: Date) -> String {
        switch self {
        case .iso8601: date.formatted(.iso8601)
        case .secondsSince1970: Self.number(date.timeIntervalSince1970)
        case .millisecondsSince1970: Self.number((date.timeIntervalSince1970 * 1000).rounded())
        case .custom(let format): format(date)
        }
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    public static func == (lhs: DateEncoding, rhs: DateEncoding) -> Bool {
        switch (lhs, rhs) {
        case (.iso8601, .iso8601), (.secondsSince1970, .secondsSince1970),
            (.millisecondsSince1970, .millisecondsSince1970), (.custom, .custom):
            true
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .iso8601: hasher.combine(0)
        case .secondsSince1970: hasher.combine(1)
        case .millisecondsSince1970: hasher.combine(2)
        case .custom: hasher.combine(3)
        }
    }
}

extension BoolEncoding {
    /// The text for `value`.
    public func text(for value: Bool) -> String {
        switch self {
        case .literal: value ? "true" : "false"
        case .numeric: value ? "1" : "0"
        }
    }
}
