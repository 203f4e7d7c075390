/// Trimming without Foundation's character sets (FoundationEssentials has none); for
/// transports too.
extension StringProtocol {
    /// The text without the spaces and tabs around it: HTTP's optional whitespace (RFC 9110,
    /// section 5.6.3), the only whitespace a field value's grammar allows there.
    @_spi(Transports) public func trimmingOptionalWhitespace() -> String {
        trimming { $0 == " " || $0 == "\t" }
    }

    /// The text without the Unicode whitespace (spaces, tabs, line breaks, no-break spaces)
    /// around it.
    @_spi(Transports) public func trimmingWhitespace() -> String {
        trimming(\.isWhitespace)
    }

    private func trimming(_ isTrimmed: (Character) -> Bool) -> String {
        guard let first = firstIndex(where: { !isTrimmed($0) }), let last = lastIndex(where: { !isTrimmed($0) }) else { return "" }
        return String(self[first...last])
    }
}
