import Foundation

/// A value that can be written into a URL query: strings, numbers, booleans, UUIDs, and arrays
/// and optionals of them.
///
/// An array adds the name once per element (`ids=1&ids=2`); `nil` adds nothing. Conform your
/// own types by returning their textual forms.
public protocol QueryValue {
    /// The unencoded values to send, one query item each.
    var queryValues: [String] { get }
}

extension String: QueryValue {
    /// The string itself.
    public var queryValues: [String] { [self] }
}

extension Substring: QueryValue {
    /// The substring as a string.
    public var queryValues: [String] { [String(self)] }
}

extension Bool: QueryValue {
    /// `true` or `false`.
    public var queryValues: [String] { [self ? "true" : "false"] }
}

extension Int: QueryValue {
    /// The decimal digits.
    public var queryValues: [String] { [String(self)] }
}

extension Int64: QueryValue {
    /// The decimal digits.
    public var queryValues: [String] { [String(self)] }
}

extension Int32: QueryValue {
    /// The decimal digits.
    public var queryValues: [String] { [String(self)] }
}

extension UInt: QueryValue {
    /// The decimal digits.
    public var queryValues: [String] { [String(self)] }
}

extension UInt64: QueryValue {
    /// The decimal digits.
    public var queryValues: [String] { [String(self)] }
}

extension Double: QueryValue {
    /// The shortest decimal form that reads back as the same value (`0.1`, `1e-05`).
    public var queryValues: [String] { [description] }
}

extension Float: QueryValue {
    /// The shortest decimal form that reads back as the same value.
    public var queryValues: [String] { [description] }
}

extension Decimal: QueryValue {
    /// The decimal form, with `.` as separator whatever the locale.
    public var queryValues: [String] { [description] }
}

extension UUID: QueryValue {
    /// The upper-case hyphenated form.
    public var queryValues: [String] { [uuidString] }
}

extension Array: QueryValue where Element: QueryValue {
    /// Every element's values, in order.
    public var queryValues: [String] { flatMap(\.queryValues) }
}

extension Optional: QueryValue where Wrapped: QueryValue {
    /// The wrapped value's values, or none for `nil`.
    public var queryValues: [String] { self?.queryValues ?? [] }
}
