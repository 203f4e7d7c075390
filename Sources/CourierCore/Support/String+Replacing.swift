/// Replacing without Foundation's `replacingOccurrences` (FoundationEssentials has none).
extension StringProtocol {
    /// The text with every occurrence of `target` (matched character by character, left to
    /// right, without overlaps) replaced by `replacement`.
    package func replacingAll(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty, var found = firstRange(of: target) else { return String(self) }
        var result = ""
        var rest = self[...]
        while true {
            result += rest[..<found.lowerBound]
            result += replacement
            rest = rest[found.upperBound...]
            guard let next = rest.firstRange(of: target) else { break }
            found = next
        }
        result += rest
        return result
    }
}
