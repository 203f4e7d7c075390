/// Appends query items named `name`, one per value: strings, numbers, booleans, arrays
/// (repeated names) and optionals (`nil` adds nothing).
///
/// Names and values are percent-encoded when the URL is rendered, so `query("q", "a+b c&d")`
/// sends `q=a%2Bb%20c%26d` and the server reads back `a+b c&d`.
/// - Parameters:
///   - name: The unencoded name.
///   - value: The value or values.
/// - Returns: The builder.
public func query(_ name: String, _ value: some QueryValue) -> RequestBuilder {
    let items = value.queryValues.map { QueryItem(name: name, value: $0) }
    return { request in
        var request = request
        request.queryItems.append(contentsOf: items)
        return request
    }
}

/// Appends query items in order.
/// - Parameter items: The unencoded items.
/// - Returns: The builder.
public func query(_ items: [QueryItem]) -> RequestBuilder {
    { request in
        var request = request
        request.queryItems.append(contentsOf: items)
        return request
    }
}

/// Appends a query item that is already percent-encoded, sent exactly as given.
///
/// Use this for values that arrive encoded (a cursor from a `Link` header, a signature) so they are
/// not encoded twice. Text that would change the query's structure (`&`, `#`, `;`, a space, a bare
/// `%`) is reported as a ``RequestProblem/Kind/invalidQuery`` problem.
/// - Parameters:
///   - name: The encoded name.
///   - value: The encoded value, or `nil` for a bare name.
/// - Returns: The builder.
public func query(percentEncoded name: String, _ value: String?) -> RequestBuilder {
    let item = QueryItem.percentEncoded(name: name, value: value)
    return { request in
        var request = request
        request.queryItems.append(item)
        return request
    }
}
