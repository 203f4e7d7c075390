#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension Response: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The status line, the URL and headers with secrets hidden, and the body's size: never a
    /// cookie, a credential or the body itself.
    ///
    /// ```text
    /// 200 https://api.example.com/v1/users?token=<redacted>
    /// Content-Type: application/json
    /// Set-Cookie: <redacted>
    /// <341 bytes>
    /// ```
    public var description: String {
        Self.describe(status: status, url: url, headers: headers, body: bodySummary)
    }

    /// The status line with the redacted URL, one line per header (secrets hidden), then `body`.
    static func describe(status: Int, url: URL?, headers: HTTPHeaders, body: String) -> String {
        var lines = ["\(status)\(url.map { " " + Request.redactedURLString($0) } ?? "")"]
        lines.append(contentsOf: headers.shownFields)
        lines.append(body)
        return lines.joined(separator: "\n")
    }

    /// The same as ``description``: secrets stay hidden in debug output too.
    public var debugDescription: String { description }

    /// Status, redacted URL and headers, and the body's size, so that `dump` and debuggers show
    /// no secret. Read ``body`` for the bytes.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "status": status, "url": url.map { Request.redactedURLString($0) } as Any, "headers": headers,
                "body": bodySummary,
            ])
    }

    private var bodySummary: String {
        "<\(body.count) bytes\(headers.shownValue(of: .contentType).map { " of \($0)" } ?? "")>"
    }
}
