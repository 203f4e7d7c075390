import Foundation

/// The start of a body as text, for error messages, with the values of secret-looking JSON keys
/// and form fields hidden.
enum BodySnippet {
    /// How many characters a snippet keeps.
    static let limit = 256

    private static let sensitiveKeys =
        "access_token|refresh_token|id_token|token|password|passwd|secret|client_secret|api_key|apikey|authorization"

    /// Makes a snippet of `body`; binary bodies are summarised by size.
    static func make(from body: Data) -> String {
        if body.isEmpty { return "" }
        let head = body.prefix(4096)
        guard let text = String(data: head, encoding: .utf8) else { return "<\(body.count) bytes of binary data>" }
        let redacted = redact(text)
        if redacted.count <= limit && head.count == body.count { return redacted }
        return String(redacted.prefix(limit)) + "…"
    }

    /// Hides values of sensitive keys in JSON (`"token": "…"`) and form bodies (`token=…`).
    static func redact(_ text: String) -> String {
        var result = text
        let patterns = [
            // JSON: "password": "…"
            ("(\"(?:\(sensitiveKeys))\"\\s*:\\s*)\"(?:[^\"\\\\]|\\\\.)*\"", "$1\"\(Redaction.placeholder)\""),
            // JSON inside a JSON string (an echoed body): \"password\": \"…\"
            (
                "(\\\\\"(?:\(sensitiveKeys))\\\\\"\\s*:\\s*)\\\\\"(?:[^\"\\\\]|\\\\[^\"])*\\\\\"",
                "$1\\\\\"\(Redaction.placeholder)\\\\\""
            ),
            // Forms and URLs: password=… up to the next &, quote, whitespace or fragment, so that
            // a URL inside a JSON string stays valid JSON.
            ("((?:^|[&?])(?:\(sensitiveKeys))=)[^&\\s\"'#]*", "$1\(Redaction.placeholder)"),
        ]
        for (pattern, template) in patterns {
            guard let expression = try? NSRegularExpression(pattern: pattern, options: [.caseInsensitive]) else { continue }
            let range = NSRange(result.startIndex..., in: result)
            result = expression.stringByReplacingMatches(in: result, range: range, withTemplate: template)
        }
        return result
    }
}
