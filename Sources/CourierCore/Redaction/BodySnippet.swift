#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The start of a body as text, for error messages, with secrets hidden (see ``BodyRedactor``).
package enum BodySnippet {
    /// How many characters a snippet keeps.
    static let limit = 256

    /// Makes a snippet of `body`; binary bodies are summarised by size. Secrets are hidden in the
    /// first 4 KiB before it is cut, so a cut never exposes part of one.
    package static func make(from body: Data, redactor: BodyRedactor = .standard) -> String {
        if body.isEmpty { return "" }
        let head = body.prefix(4096)
        guard let text = String(data: head, encoding: .utf8) ?? String(data: head.dropLast(3), encoding: .utf8),
            !text.contains("\0")
        else { return "<\(body.count) bytes of binary data>" }
        let redacted = redactor.redact(text)
        if redacted.count <= limit && head.count == body.count { return redacted }
        return String(redacted.prefix(limit)) + "…"
    }

    /// Hides secrets in `text` with the standard names only.
    static func redact(_ text: String) -> String { BodyRedactor.standard.redact(text) }
}
