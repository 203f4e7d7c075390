import CourierCore

/// One byte range a request asks for in its `Range` field ([RFC 9110 §14.1.2](https://www.rfc-editor.org/rfc/rfc9110#section-14.1.2)):
/// `bytes=0-99`, `bytes=100-`, `bytes=-50`. What a cache needs to cut a `206` from a stored
/// complete response; a field it cannot read as one range (several ranges, another unit, a
/// malformed one) is `nil`, and the request goes to the origin.
struct ByteRange: Sendable, Hashable {
    /// `first-last`, `first-` (`last` nil), or a suffix of `suffixLength` bytes.
    var first: Int?
    var last: Int?
    var suffixLength: Int?

    /// Reads a `Range` field value; `nil` unless it is one byte range.
    init?(_ value: String) {
        let trimmed = HTTPSyntax.trimmed(value)
        guard let equals = trimmed.firstIndex(of: "="), HTTPSyntax.asciiLowercased(HTTPSyntax.trimmed(String(trimmed[..<equals]))) == "bytes" else { return nil }
        let spec = HTTPSyntax.trimmed(String(trimmed[trimmed.index(after: equals)...]))
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return nil }
        func number(_ text: Substring) -> Int?? {
            if text.isEmpty { return .some(nil) }
            guard text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            return .some(Int(text) ?? Int.max)
        }
        guard let first = number(spec[..<dash]), let last = number(spec[spec.index(after: dash)...]) else { return nil }
        switch (first, last) {
        case (nil, let suffix?):
            self.suffixLength = suffix
        case (let start?, let end):
            if let end, end < start { return nil }
            self.first = start
            self.last = end
        case (nil, nil):
            return nil
        }
    }

    /// The bytes of a representation of `length` bytes this range selects, as a closed range, or
    /// `nil` when it selects none (RFC 9110 §14.1.1: unsatisfiable, a `416`).
    func resolved(length: Int) -> ClosedRange<Int>? {
        if let suffixLength {
            guard suffixLength > 0, length > 0 else { return nil }
            return Swift.max(0, length - suffixLength)...(length - 1)
        }
        guard let first, first < length else { return nil }
        return first...Swift.min(last ?? Int.max, length - 1)
    }
}
