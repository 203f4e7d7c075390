/// Trimming without Foundation's character sets (FoundationEssentials has none); for
/// transports too.
extension StringProtocol {
    /// The text without the spaces and tabs around it: HTTP's optional whitespace (RFC 9110,
    /// section 5.6.3), the only whitespace a field value's grammar allows there; trimmed as bytes,
    /// as every field is (`HTTPSyntax.trimmed`).
    @_spi(Transports) public func trimmingOptionalWhitespace() -> String {
        HTTPSyntax.trimmed(Substring(self).utf8)
    }

    /// The text without the Unicode whitespace (spaces, tabs, line breaks, no-break spaces)
    /// around it.
    @_spi(Transports) public func trimmingWhitespace() -> String {
        guard let first = firstIndex(where: { !$0.isWhitespace }), let last = lastIndex(where: { !$0.isWhitespace }) else { return "" }
        return String(self[first...last])
    }
}
