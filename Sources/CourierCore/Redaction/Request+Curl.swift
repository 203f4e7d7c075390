#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension Request {
    /// The request as a `curl` command, with secrets redacted; see ``curl(redacting:)``.
    public var curl: String { curl(redacting: true) }

    /// The request as a runnable `curl` command, for reproducing a call from a terminal.
    ///
    /// With `redacting` (the default) the same things are hidden as in ``description``: sensitive
    /// headers, sensitive query values and URL userinfo become `<redacted>`, and so do the values
    /// of secret-looking fields (`password`, `token`, …) in a JSON or form body. Pass `false` only
    /// for local debugging: the command then contains the credentials. Binary bodies are left out
    /// with a note. Every argument is single-quoted for POSIX shells.
    ///
    /// ```text
    /// curl -X POST 'https://api.example.com/v1/users' \
    ///   -H 'Authorization: <redacted>' \
    ///   -H 'Content-Type: application/json' \
    ///   --data-binary '{"name":"Ada"}'
    /// ```
    /// - Parameter redacting: Whether to hide secrets.
    /// - Returns: The command.
    public func curl(redacting: Bool) -> String {
        let policy: Redaction? = redacting ? redaction : nil
        var parts = ["curl"]
        switch method {
        case .get where body == nil: break
        case .head: parts.append("--head")
        default: parts.append("-X " + Self.shellQuoted(method.rawValue))
        }
        parts.append(Self.shellQuoted(urlString(redacting: policy) ?? "(no URL)"))
        var lines = [parts.joined(separator: " ")]
        for field in headers {
            let hidden = policy.map { $0.isSensitive(header: field.name) || headers.sensitiveNames.contains(field.name) } ?? false
            let value = hidden ? Redaction.placeholder : field.value
            lines.append("-H " + Self.shellQuoted("\(field.name.rawValue): \(value)"))
        }
        if let body, !body.isEmpty {
            if let text = String(data: body, encoding: .utf8), !text.contains("\0") {
                lines.append("--data-binary " + Self.shellQuoted(redacting ? BodyRedactor(request: self).redact(text) : text))
            } else {
                lines.append("--data-binary @body.bin  # \(body.count) bytes of binary data, not shown")
            }
        }
        return lines.joined(separator: " \\\n  ")
    }

    /// Quotes `text` for a POSIX shell: single quotes, with `'` written as `'\''`.
    static func shellQuoted(_ text: String) -> String {
        "'" + text.replacingAll("'", with: "'\\''") + "'"
    }
}
