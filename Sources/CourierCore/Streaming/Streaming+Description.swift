#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension StreamedResponse: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The status line, the URL and headers with secrets hidden, and `<streaming body>`: never a
    /// cookie, a credential or body bytes.
    public var description: String {
        Response.describe(
            status: status, url: url, headers: headers, body: "<streaming body\(headers.shownValue(of: .contentType).map { " of \($0)" } ?? "")>")
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// Status, redacted URL and headers; no body internals.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "status": status, "url": url.map { Request.redactedURLString($0) } as Any, "headers": headers,
                "body": "<streaming body>",
            ])
    }
}

extension ByteStream: CustomStringConvertible, CustomReflectable {
    /// `<byte stream>`: a stream shows no bytes when printed.
    public var description: String { "<byte stream>" }

    /// No children: reading the bytes is the only way to see them.
    public var customMirror: Mirror { Mirror(self, children: []) }
}

extension ServerSentEvent: CustomReflectable {
    /// The event type, ID and retry, and the data with secret-looking fields hidden (an event's
    /// JSON can carry a token).
    public var customMirror: Mirror {
        Mirror(
            self,
            children: ["event": event, "id": id as Any, "retry": retry as Any, "data": BodySnippet.redact(data)])
    }
}

extension BodySource: CustomReflectable {
    /// What the body is (a file name, a part count), never its bytes or full path.
    public var customMirror: Mirror { Mirror(self, children: ["body": description]) }
}
