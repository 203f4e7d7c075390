#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension Request: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The request as an HTTP/1.1 message, with secrets hidden.
    ///
    /// Sensitive header values (see ``redaction``), sensitive query values and URL userinfo are
    /// replaced by `<redacted>`. The body is summarised by size and content type, never printed,
    /// because bodies often carry passwords and tokens. Problems, if any, follow as `#` lines.
    ///
    /// ```text
    /// GET /v1/users?page=2 HTTP/1.1
    /// Host: api.example.com
    /// Authorization: <redacted>
    /// ```
    public var description: String {
        var lines = ["\(method.rawValue) \(target(redacting: redaction)) HTTP/1.1"]
        if let host = baseURL?.host, !headers.contains(.host) {
            let port = baseURL?.port.map { ":\($0)" } ?? ""
            lines.append("Host: \(host)\(port)")
        }
        for field in headers {
            let value =
                redaction.isSensitive(header: field.name) || headers.sensitiveNames.contains(field.name)
                ? Redaction.placeholder : field.value
            lines.append("\(field.name.rawValue): \(value)")
        }
        if let body {
            lines.append("")
            lines.append("<\(body.count) bytes\(headers[.contentType].map { " of \($0)" } ?? "")>")
        } else if let bodySource {
            lines.append("")
            lines.append("<body read when sent: \(bodySource)\(headers[.contentType].map { " of \($0)" } ?? "")>")
        }
        for problem in problems {
            lines.append("# invalid: \(problem.message)")
        }
        return lines.joined(separator: "\n")
    }

    /// The same as ``description``: secrets stay hidden in debug output too.
    public var debugDescription: String { description }

    /// What `dump`, `Mirror` and debuggers show: the method, the URL and headers with secrets
    /// hidden, the body's size (never its bytes), the options and the problems.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "method": method.rawValue,
                "url": urlString(redacting: redaction) as Any,
                "headers": redaction.redacting(headers),
                "body": body.map { "<\($0.count) bytes>" } ?? bodySource.map { "<\($0)>" } as Any,
                "timeout": timeout as Any,
                "deadline": deadline as Any,
                "cachePolicy": cachePolicy as Any,
                "allowsRetry": allowsRetry as Any,
                "problems": problems.map(\.message),
            ])
    }

    /// A copy whose sensitive header values, sensitive query values and URL userinfo are replaced
    /// by a placeholder, and whose body is dropped. Errors carry this copy so that a logged or
    /// printed error cannot leak a credential.
    /// - Returns: The redacted copy.
    public func redacted() -> Request {
        var copy = self
        copy.headers = redaction.redacting(headers)
        copy.queryItems = queryItems.map { item in
            guard item.value != nil, redaction.isSensitive(queryName: item.decodedName) else { return item }
            return QueryItem(name: item.decodedName, value: Redaction.placeholder)
        }
        if let baseURL, var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false) {
            let sensitiveQuery = components.queryItems?.contains { redaction.isSensitive(queryName: $0.name) } ?? false
            if components.user != nil || components.password != nil || sensitiveQuery {
                components.user = nil
                components.password = nil
                components.queryItems = components.queryItems?.map { item in
                    redaction.isSensitive(queryName: item.name) ? URLQueryItem(name: item.name, value: "redacted") : item
                }
                copy.baseURL = components.url
            }
        }
        copy.body = nil
        copy.bodySource = nil
        return copy
    }
}
