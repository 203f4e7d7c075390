#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Hides secrets in a body shown as text (logs, HAR files, curl commands, error snippets).
///
/// Three passes, so that a secret is hidden whatever shape the body has:
/// 1. JSON: the value of every key the ``Redaction`` calls sensitive (``Redaction/isSensitive(fieldName:)``),
///    at any depth, becomes `"<redacted>"` (objects and arrays too), and JSON or form text
///    inside a string (an echoed request body) is redacted the same way; the JSON stays valid.
/// 2. Forms, URLs and header lines: `name=value` pairs and `Name: value` lines with a
///    sensitive name.
/// 3. Echoes: the request's own secret values (sensitive header values and their credentials,
///    cookie values, sensitive query values, URL userinfo), wherever they appear; in a body that
///    is valid JSON, so that it stays valid JSON.
package struct BodyRedactor: Sendable {
    /// The names to hide.
    var redaction: Redaction
    /// The literal values to hide wherever they appear, in every spelling, as UTF-8 bytes: they
    /// are searched for as bytes, so a match inside a grapheme cluster (a secret and a combining
    /// mark after it) is hidden too.
    private let secretBytes: [[UInt8]]
    /// All of ``secretBytes`` at once: a body is read once, however many there are.
    private let search: SecretSearch

    /// The standard names, no literal secrets.
    static let standard = BodyRedactor(redaction: Redaction(), secrets: [])

    init(redaction: Redaction, secrets: [String]) {
        self.redaction = redaction
        let values = secrets.filter { $0.utf8.count >= 4 && $0 != Redaction.placeholder }
        // Each value also as JSON encoders write it inside a string: an echo in a JSON body
        // carries it so.
        // Each in its composed and decomposed forms too (NFC, NFD): a server that normalises
        // what it echoes changes the bytes, not the secret.
        let spellings = values.flatMap { value in
            value.utf8.allSatisfy { $0 < 0x80 }
                ? [value] : value.canonicalSpellings
        }
            .flatMap(Self.jsonSpellings)
        // As bytes (Strings in different normal forms compare equal); the search drops repeats.
        self.secretBytes = spellings.map { Array($0.utf8) }
        self.search = SecretSearch(secretBytes)
    }

    /// `value` as written and as JSON encoders write it inside a string: quotes, backslashes and
    /// control characters escaped; then also `/` as `\/` (PHP, Apple's JSONSerialization), and
    /// everything outside ASCII as `\uXXXX` in lower- and uppercase hex (Python's json).
    static func jsonSpellings(of value: String) -> [String] {
        guard value.unicodeScalars.contains(where: { $0.value < 0x20 || $0 == "\"" || $0 == "\\" || $0 == "/" || !$0.isASCII })
        else { return [value] }
        var minimal = "", slashes = "", lower = "", upper = ""
        for scalar in value.unicodeScalars {
            let escaped: String
            switch scalar {
            case "\"": escaped = "\\\""
            case "\\": escaped = "\\\\"
            case "\n": escaped = "\\n"
            case "\r": escaped = "\\r"
            case "\t": escaped = "\\t"
            case "\u{0}"..."\u{1F}": escaped = hexEscape(UInt16(scalar.value), uppercase: false)
            default: escaped = String(scalar)
            }
            minimal += escaped
            slashes += scalar == "/" ? "\\/" : escaped
            if scalar.isASCII {
                lower += escaped
                upper += escaped
            } else {
                for unit in String(scalar).utf16 {
                    lower += hexEscape(unit, uppercase: false)
                    upper += hexEscape(unit, uppercase: true)
                }
            }
        }
        return [value, minimal, slashes, lower, upper]
    }

    private static func hexEscape(_ unit: UInt16, uppercase: Bool) -> String {
        let digits = String(unit, radix: 16, uppercase: uppercase)
        return "\\u" + String(repeating: "0", count: 4 - digits.count) + digits
    }

    /// The redactor for bodies exchanged for `request`: its own names and secret values, plus
    /// `extra` names.
    package init(request: Request?, extra: Redaction = Redaction()) {
        guard let request else {
            self.init(redaction: extra, secrets: [])
            return
        }
        self.init(redaction: request.redaction.merging(extra), secrets: request.secretValues(extra: extra))
    }

    /// `text` with secrets hidden.
    /// - Parameters:
    ///   - text: The text: JSON, JSON lines, a `text/event-stream`, a form, header lines, prose.
    ///   - truncated: Whether `text` is the start of a longer body (a log cap, a recording
    ///     limit): then the end of the text may be the start of a secret value, and is hidden
    ///     too.
    package func redact(_ text: String, truncated: Bool = false) -> String {
        var current = redactStructure(text)
        guard !search.isEmpty else { return current }
        // Hiding an echo can make a name read as sensitive (`abcd-1234cookie` is one word,
        // `<redacted>cookie` is `cookie`), so names are read again; hiding that value can
        // re-escape a string so that a secret's bytes appear anew (`\u0001` and then U+FFFD
        // spell `1\u{FFFD}`). The two passes take turns until neither changes anything, an echo
        // pass last, so no secret is ever left. Whether the text is JSON is asked once, when
        // the first echo is found: each pass keeps valid JSON valid.
        var isJSON: Bool? = nil
        for _ in 0..<3 {
            guard let hidden = hidingEchoes(in: current, truncated: truncated, isJSON: &isJSON) else { return current }
            let reread = redactStructure(hidden)
            if reread.utf8.elementsEqual(hidden.utf8) { return hidden }
            current = reread
        }
        return hidingEchoes(in: current, truncated: truncated, isJSON: &isJSON) ?? current
    }

    /// `text` with every secret value hidden, or `nil` when it holds none. `isJSON` is whether
    /// the text is valid JSON, worked out here the first time it is needed.
    private func hidingEchoes(in text: String, truncated: Bool, isJSON: inout Bool?) -> String? {
        let bytes = Array(text.utf8)
        // A cut text may end with the first bytes (four or more) of a secret: those are hidden too.
        let placeholder = Array(Redaction.placeholder.utf8)
        let echoes = search.occurrences(in: bytes, minimumCutLength: truncated ? 4 : nil, opaque: placeholder)
        guard !echoes.isEmpty else { return nil }
        // An echo in valid JSON is hidden so that the JSON stays valid (BodyRedactor+JSONEchoes).
        if !truncated {
            let json = isJSON ?? Self.isJSONText(bytes)
            isJSON = json
            if json {
                return String(decoding: Self.hidingEchoes(at: echoes, inJSON: bytes, secrets: secretBytes), as: UTF8.self)
            }
        }
        // Each range starts where a secret starts (a lead byte) and ends where one ends or the
        // text ends (the end of a scalar): the result is still valid UTF-8.
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + echoes.count * placeholder.count)
        var copied = 0
        for echo in echoes {
            output.append(contentsOf: bytes[copied..<echo.lowerBound])
            output.append(contentsOf: placeholder)
            copied = echo.upperBound
        }
        output.append(contentsOf: bytes[copied...])
        return String(decoding: output, as: UTF8.self)
    }

    /// Whether `bytes` are JSON text as the redactor reads text, in UTF-8. The grammar first (no
    /// objects built); what it refuses is asked of Foundation's parser, which reads a little
    /// more (a byte-order mark) — but not text with a NUL byte: JSON in
    /// UTF-8 has none (a string escapes it), and Foundation reads such bytes as UTF-16 or
    /// UTF-32, whose structure is not the one the echo pass would keep valid.
    static func isJSONText(_ bytes: [UInt8]) -> Bool {
        if JSONSyntax.isValid(bytes) { return true }
        guard !bytes.contains(0) else { return false }
        return JSONValue.decode(Data(bytes)) != nil
    }

    /// Sensitive fields hidden by shape: JSON (one document or one per line), server-sent events
    /// (the JSON in `data:` lines, joined as the events join them), otherwise forms, header lines
    /// and any JSON further down.
    private func redactStructure(_ text: String) -> String {
        let trimmed = text.drop { $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" || $0 == "\u{FEFF}" }
        if trimmed.first == "{" || trimmed.first == "[" { return redactJSON(text) }
        if Self.looksLikeEventStream(trimmed) { return redactEventStream(text) }
        let plain = redactPlain(text)
        // JSON after a first line of something else (an event's later data lines, a log).
        return plain.utf8.contains(UInt8(ascii: "\"")) ? redactJSON(plain) : plain
    }

    /// The lines of `text`, split at each LF (a CR before it stays on the line: `"\r\n"` is one
    /// `Character`, so splitting by characters would not see it).
    private static func lines(_ text: String) -> [Substring] {
        text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).map { Substring($0) }
    }

    // MARK: Server-sent events

    /// Whether the text starts like a `text/event-stream`: a `data`, `event`, `id` or `retry`
    /// field, or a `:` comment.
    private static func looksLikeEventStream(_ text: Substring) -> Bool {
        // Bytes, as a reader reads them: `:` and a combining mark after it are one Character.
        let firstLine = text.utf8.prefix { $0 != UInt8(ascii: "\n") && $0 != UInt8(ascii: "\r") }
        guard let colon = firstLine.firstIndex(of: UInt8(ascii: ":")) else { return false }
        return colon == firstLine.startIndex || ["data", "event", "id", "retry"].contains(Substring(firstLine[..<colon]))
    }

    /// An event stream with each event's data (its `data:` lines joined with LF, as a reader
    /// joins them) redacted as a body of its own, so JSON spread over several lines is hidden
    /// too; other lines are redacted as header lines.
    private func redactEventStream(_ text: String) -> String {
        var output: [String] = []
        var data: [Substring] = []
        func flush() {
            guard !data.isEmpty else { return }
            let payload = redactStructure(data.joined(separator: "\n"))
            for line in payload.split(separator: "\n", omittingEmptySubsequences: false) { output.append("data: " + line) }
            data = []
        }
        for line in Self.lines(text) {
            let content = line.utf8.last == UInt8(ascii: "\r") ? line.dropLast() : line
            if content.utf8.starts(with: "data:".utf8) {
                // The value starts after the colon byte and one space byte, as a reader takes it.
                var value = content.utf8.dropFirst(5)
                if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
                data.append(Substring(value))
                continue
            }
            flush()
            output.append(redactPlain(String(line)))
        }
        flush()
        return output.joined(separator: "\n")
    }

    // MARK: JSON

    private func redactJSON(_ text: String) -> String {
        let bytes = Array(text.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "\"") else {
                output.append(byte)
                index += 1
                continue
            }
            let end = JSONSyntax.stringEnd(bytes, from: index)
            let literal = bytes[index..<end]
            var after = end
            while after < bytes.count, JSONSyntax.isSpace(bytes[after]) { after += 1 }
            if after < bytes.count, bytes[after] == UInt8(ascii: ":") {
                // A key: hide the whole value when the key is sensitive.
                output.append(contentsOf: literal)
                output.append(contentsOf: bytes[end...after])
                index = after + 1
                guard redaction.isSensitive(fieldName: JSONSyntax.unescaped(literal)) else { continue }
                while index < bytes.count, JSONSyntax.isSpace(bytes[index]) {
                    output.append(bytes[index])
                    index += 1
                }
                index = JSONSyntax.valueEnd(bytes, from: index)
                output.append(contentsOf: Array("\"\(Redaction.placeholder)\"".utf8))
            } else {
                output.append(contentsOf: redactedStringLiteral(literal))
                index = end
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// A string value, with JSON, form or header text inside it (an echoed body) redacted.
    private func redactedStringLiteral(_ literal: ArraySlice<UInt8>) -> [UInt8] {
        guard literal.contains(where: { $0 == UInt8(ascii: "=") || $0 == UInt8(ascii: ":") }),
            literal.count >= 2, literal.last == UInt8(ascii: "\"")
        else { return Array(literal) }
        let content = JSONSyntax.unescaped(literal)
        let trimmed = content.drop { $0 == " " || $0 == "\n" }
        let redacted = trimmed.first == "{" || trimmed.first == "[" ? redactJSON(content) : redactPlain(content)
        guard redacted != content else { return Array(literal) }
        return Array(JSONSyntax.escaped(redacted).utf8)
    }

    // MARK: Forms, URLs and header lines

    /// Hides `name=value` values (forms, queries, cookies) and `Name: value` lines with a
    /// sensitive name.
    private func redactPlain(_ text: String) -> String {
        var lines: [Substring] = []
        var changed = false
        for line in Self.lines(text) {
            if let valueStart = sensitiveHeaderValueStart(line) {
                lines.append(line[..<valueStart] + Redaction.placeholder + (line.utf8.last == UInt8(ascii: "\r") ? "\r" : ""))
                changed = true
            } else {
                lines.append(line)
            }
        }
        let joined = changed ? lines.joined(separator: "\n") : text
        return redactPairs(joined)
    }

    /// Where the value of a `Name: value` line with a sensitive name starts (after the colon
    /// and any spaces), or `nil`. Read on bytes: the name ends at the first `:` byte, whatever
    /// follows it (`:` and a combining mark are one Character, and a search by Character would
    /// find no colon and show the value).
    private func sensitiveHeaderValueStart(_ line: Substring) -> String.Index? {
        let bytes = line.utf8
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon != bytes.startIndex else { return nil }
        let name = bytes[..<colon]
        guard name.allSatisfy({ $0 | 0x20 &- UInt8(ascii: "a") < 26 || $0 &- UInt8(ascii: "0") < 10 || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }),
            redaction.isSensitive(fieldName: String(Substring(name)))
        else { return nil }
        var valueStart = bytes.index(after: colon)
        while valueStart < bytes.endIndex, bytes[valueStart] == UInt8(ascii: " ") { valueStart = bytes.index(after: valueStart) }
        return valueStart
    }

    /// Hides the values of `name=value` pairs whose name is sensitive. A pair starts at the
    /// start of the text or after `&`, `?`, `;`, whitespace, a quote or a comma, and its value
    /// ends at `&`, `;`, `#`, whitespace, a quote or a comma, so a URL or cookie inside JSON
    /// text stays well formed; a quote escaped with a backslash (`\"`) does not end it.
    private func redactPairs(_ text: String) -> String {
        guard text.utf8.contains(UInt8(ascii: "=")) else { return text }
        let bytes = Array(text.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = 0
        var nameStart = 0
        func isBoundary(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "&"), UInt8(ascii: "?"), UInt8(ascii: ";"), UInt8(ascii: " "), UInt8(ascii: "\n"),
                UInt8(ascii: "\r"), UInt8(ascii: "\t"), UInt8(ascii: "\""), UInt8(ascii: "'"), UInt8(ascii: ","),
                UInt8(ascii: "#"):
                return true
            default: return false
            }
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "="), index > nameStart {
                let name = String(decoding: bytes[nameStart..<index], as: UTF8.self)
                output.append(byte)
                index += 1
                if redaction.isSensitive(fieldName: PercentEncoding.decode(Substring(name)).replacingAll("+", with: " ")) {
                    let valueStart = index
                    while index < bytes.count {
                        // A quote escaped by a backslash (form text inside a JSON string) is part
                        // of the value: ending there would hide the backslash, unescape the quote
                        // and break the JSON, and show the rest of the value.
                        if bytes[index] == UInt8(ascii: "\""), Self.isEscaped(bytes, at: index, notBefore: valueStart) {
                            index += 1
                            continue
                        }
                        if isBoundary(bytes[index]) { break }
                        index += 1
                    }
                    output.append(contentsOf: Array(Redaction.placeholder.utf8))
                }
                nameStart = index
                continue
            }
            output.append(byte)
            index += 1
            if isBoundary(byte) || byte == UInt8(ascii: "=") { nameStart = index }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Whether the byte at `index` is escaped: an odd run of backslashes before it, counted
    /// back to `start` at most.
    private static func isEscaped(_ bytes: [UInt8], at index: Int, notBefore start: Int) -> Bool {
        var count = 0
        var position = index - 1
        while position >= start, bytes[position] == UInt8(ascii: "\\") {
            count += 1
            position -= 1
        }
        return count % 2 == 1
    }
}
