/// Expands a URI template ([RFC 6570](https://www.rfc-editor.org/rfc/rfc6570)) and appends the
/// resulting path and query to the request.
///
/// ```swift
/// .get |> baseURL("https://api.example.com/v1")
///     |> template("/users/{id}{?fields*,limit}", ["id": 42, "fields": ["name", "email"]])
/// // https://api.example.com/v1/users/42?fields=name&fields=email
/// ```
///
/// The expansion must be a path (starting with `/`, or empty) with an optional query. Its path
/// segments and query items are decoded and stored like those of ``path(_:)`` and ``query(_:_:encoding:)``,
/// so the usual checks apply: a value can never add a segment (`/` inside a simple `{var}` stays
/// `%2F`), and a `.` or `..` segment is a problem. A malformed template, a prefix modifier on a
/// list, a fragment or an expansion that is not a path is recorded as a
/// ``RequestProblem/Kind/invalidTemplate`` problem.
/// - Parameters:
///   - template: The template text.
///   - variables: The values by variable name.
/// - Returns: The builder.
public func template(_ template: String, _ variables: [String: URITemplate.Value]) -> RequestBuilder {
    let outcome: Result<(segments: [String], items: [QueryItem]), RequestProblem>
    do {
        let expanded = try URITemplate(template).expand(variables)
        outcome = splitTarget(expanded)
    } catch {
        outcome = .failure(RequestProblem(.invalidTemplate, "the URI template is invalid: \(error.message)"))
    }
    return { request in
        var request = consume request
        switch outcome {
        case .success(let parts):
            request.appendPathSegments(parts.segments)
            request.appendQueryItems(parts.items)
        case .failure(let problem):
            request.record(problem)
        }
        return request
    }
}

/// Splits an expanded `path?query` into decoded segments and items.
private func splitTarget(_ expanded: String) -> Result<(segments: [String], items: [QueryItem]), RequestProblem> {
    if expanded.contains("#") {
        return .failure(RequestProblem(.invalidTemplate, "the expanded template has a fragment (#…), which is never sent"))
    }
    let pieces = expanded.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
    let pathPart = pieces.first ?? ""
    guard pathPart.isEmpty || pathPart.hasPrefix("/") else {
        return .failure(RequestProblem(.invalidTemplate, "the expanded template must be a path starting with '/'"))
    }
    let segments = pathPart.isEmpty ? [] : pathPart.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        .map { PercentEncoding.decode($0) }
    var items: [QueryItem] = []
    if pieces.count == 2 {
        for pair in pieces[1].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = PercentEncoding.decode(parts[0])
            items.append(QueryItem(name: name, value: parts.count == 2 ? PercentEncoding.decode(parts[1]) : nil))
        }
    }
    return .success((segments, items))
}
