#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Echoed secrets hidden in a body that is valid JSON, so that it stays valid JSON.
///
/// A secret replaced as bytes can break JSON: when it runs from inside a key into its value
/// (`asswd":"hun` in `"heapasswd":"hunter9"`), when it is a whole number (`12345678` in
/// `{"id": 12345678}`), or when it ends or starts inside an escape (`abcd\` in `"abcd\"e"`).
/// Here each echo is hidden by the smallest change that keeps the syntax:
/// - inside one string, the echo and any escape it cuts become `<redacted>`;
/// - otherwise each string or scalar (number, `true`, `false`, `null`) it touches becomes
///   `"<redacted>"`, and the punctuation between them stays;
/// - a secret still there after that (one made of punctuation and spaces alone) hides the whole
///   body: the secret always wins.
extension BodyRedactor {
    /// `json` (valid JSON text) with the bytes at `echoes` (in order, not overlapping: where
    /// ``SecretSearch`` found the secrets) hidden, still valid JSON. `secrets` are the spellings
    /// searched for, to check that none is left.
    static func hidingEchoes(at echoes: [Range<Int>], inJSON json: [UInt8], secrets: [[UInt8]]) -> [UInt8] {
        let bytes = hidingEchoes(at: echoes, inJSON: json)
        let placeholder = Array("\"\(Redaction.placeholder)\"".utf8)
        // A secret still there (one made of punctuation and spaces alone) hides the whole body.
        // One that the placeholder itself spells (`redacted`) says nothing when it shows.
        let telling = SecretSearch(secrets.filter { secret in
            secret.count > placeholder.count
                || !(0...(placeholder.count - secret.count)).contains { placeholder[$0..<$0 + secret.count].elementsEqual(secret) }
        })
        return telling.occurs(in: bytes) ? placeholder : bytes
    }

    /// One kind of JSON token: whitespace between tokens is not one.
    private enum TokenKind { case string, scalar, punctuation }

    /// `json` with the bytes at `echoes` hidden by the smallest changes that keep it JSON.
    private static func hidingEchoes(at echoes: [Range<Int>], inJSON json: [UInt8]) -> [UInt8] {
        guard !echoes.isEmpty else { return json }

        let tokens = tokenize(json)
        var whole = Set<Int>()
        var inside: [Int: [Range<Int>]] = [:]
        var first = 0
        for echo in echoes {
            while first < tokens.count, tokens[first].range.upperBound <= echo.lowerBound { first += 1 }
            var touched = first..<first
            while touched.upperBound < tokens.count, tokens[touched.upperBound].range.lowerBound < echo.upperBound {
                touched = touched.lowerBound..<touched.upperBound + 1
            }
            if touched.count == 1, tokens[first].kind == .string,
                tokens[first].range.lowerBound < echo.lowerBound, echo.upperBound < tokens[first].range.upperBound
            {
                inside[first, default: []].append(echo)
            } else {
                for index in touched where tokens[index].kind != .punctuation { whole.insert(index) }
            }
        }

        let placeholder = Array(Redaction.placeholder.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(json.count)
        var copied = 0
        for (index, token) in tokens.enumerated() {
            if whole.contains(index) {
                output.append(contentsOf: json[copied..<token.range.lowerBound])
                output.append(UInt8(ascii: "\""))
                output.append(contentsOf: placeholder)
                output.append(UInt8(ascii: "\""))
                copied = token.range.upperBound
            } else if let echoes = inside[index] {
                // Widened echoes in one string may overlap: each byte hidden once.
                for range in widened(echoes, toEscapesIn: json, string: token.range) where range.upperBound > copied {
                    output.append(contentsOf: json[copied..<max(copied, range.lowerBound)])
                    if range.lowerBound >= copied { output.append(contentsOf: placeholder) }
                    copied = range.upperBound
                }
            }
        }
        output.append(contentsOf: json[copied...])
        return output
    }

    /// `echoes` (in order, not overlapping), inside the string literal at `string`, each widened
    /// to whole escapes at both ends (`\"`, `\uXXXX`, a surrogate pair `\uD83D\uDE00`): hiding
    /// part of one would leave an escape the JSON cannot read. One pass over the string, however
    /// many echoes it holds.
    private static func widened(_ echoes: [Range<Int>], toEscapesIn json: [UInt8], string: Range<Int>) -> [Range<Int>] {
        var lowers = echoes.map(\.lowerBound)
        var uppers = echoes.map(\.upperBound)
        var nextLower = 0
        var nextUpper = 0
        var index = string.lowerBound + 1
        let end = string.upperBound - 1
        while index < end, nextUpper < echoes.count {
            let unitEnd = index + escapeLength(json, at: index, end: end)
            while nextLower < echoes.count, lowers[nextLower] < unitEnd {
                if lowers[nextLower] > index { lowers[nextLower] = index }
                nextLower += 1
            }
            while nextUpper < echoes.count, uppers[nextUpper] < unitEnd {
                if uppers[nextUpper] > index { uppers[nextUpper] = unitEnd }
                nextUpper += 1
            }
            index = unitEnd
        }
        return zip(lowers, uppers).map { $0..<$1 }
    }

    /// The number of bytes of the character or escape at `index` in a string's content (which
    /// ends at `end`): 1 for a plain byte, 2 for `\"` and the like, 6 for `\uXXXX`, 12 for a
    /// surrogate pair.
    private static func escapeLength(_ json: [UInt8], at index: Int, end: Int) -> Int {
        guard json[index] == UInt8(ascii: "\\"), index + 1 < end else { return 1 }
        guard json[index + 1] == UInt8(ascii: "u"), index + 6 <= end else { return 2 }
        let isHigh = hexValue(json[(index + 2)..<(index + 6)]).map { (0xD800...0xDBFF).contains($0) } ?? false
        if isHigh, index + 12 <= end, json[index + 6] == UInt8(ascii: "\\"), json[index + 7] == UInt8(ascii: "u"),
            let low = hexValue(json[(index + 8)..<(index + 12)]), (0xDC00...0xDFFF).contains(low)
        {
            return 12
        }
        return 6
    }

    private static func hexValue(_ digits: ArraySlice<UInt8>) -> Int? {
        var value = 0
        for digit in digits {
            guard let nibble = JSONSyntax.hexDigitValue(digit) else { return nil }
            value = value * 16 + Int(nibble)
        }
        return value
    }

    /// The tokens of valid JSON text, in order.
    private static func tokenize(_ json: [UInt8]) -> [(range: Range<Int>, kind: TokenKind)] {
        var tokens: [(range: Range<Int>, kind: TokenKind)] = []
        var index = 0
        while index < json.count {
            switch json[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"):
                index += 1
            case UInt8(ascii: "\""):
                var end = index + 1
                while end < json.count, json[end] != UInt8(ascii: "\"") { end += json[end] == UInt8(ascii: "\\") ? 2 : 1 }
                let upper = min(end + 1, json.count)
                tokens.append((index..<upper, .string))
                index = upper
            case UInt8(ascii: "{"), UInt8(ascii: "}"), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: ":"), UInt8(ascii: ","):
                tokens.append((index..<index + 1, .punctuation))
                index += 1
            default:
                var end = index + 1
                while end < json.count, !Self.endsScalar(json[end]) { end += 1 }
                tokens.append((index..<end, .scalar))
                index = end
            }
        }
        return tokens
    }

    private static func endsScalar(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"), UInt8(ascii: "\""),
            UInt8(ascii: "{"), UInt8(ascii: "}"), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: ":"), UInt8(ascii: ","):
            return true
        default: return false
        }
    }
}
