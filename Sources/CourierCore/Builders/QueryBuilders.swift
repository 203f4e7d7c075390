/// Appends query items named `name`: strings, numbers, booleans, dates, arrays and optionals
/// (`nil` adds nothing).
///
/// Names and values are percent-encoded when the URL is rendered, so `query("q", "a+b c&d")`
/// sends `q=a%2Bb%20c%26d` and the server reads back `a+b c&d`. Lists, booleans and dates follow
/// a ``QueryEncoding``: the one given here, else the request's
/// (``encodingDefaults(query:form:)``), else the default (`ids=1&ids=2`, `true`, ISO 8601).
///
/// ```swift
/// query("ids", [1, 2, 3])                                            // ids=1&ids=2&ids=3
/// query("ids", [1, 2, 3], encoding: .init(arrayEncoding: .comma))    // ids=1,2,3
/// query("since", date, encoding: .init(dateEncoding: .secondsSince1970))
/// ```
/// - Parameters:
///   - name: The unencoded name.
///   - value: The value or values.
///   - encoding: How lists, booleans and dates are written; `nil` for the request's default.
/// - Returns: The builder.
@inlinable
public func query(_ name: String, _ value: some QueryValue, encoding: QueryEncoding? = nil) -> RequestBuilder {
    let representation = value.queryRepresentation
    if case .text(let text) = representation {
        // The common case needs no strategy: build the item once.
        let item = QueryItem(name: name, value: text)
        return { request in
            var request = consume request
            request.appendQueryItem(item)
            return request
        }
    }
    return encodedQuery(name, representation, encoding: encoding)
}

/// The builder for a value that needs a ``QueryEncoding`` (lists, booleans, dates, `nil`).
@usableFromInline
func encodedQuery(_ name: String, _ representation: QueryRepresentation, encoding: QueryEncoding?) -> RequestBuilder {
    { request in
        var request = consume request
        let strategy = encoding ?? request.encodingDefaults.query ?? QueryEncoding()
        request.appendQueryItems(strategy.items(name: name, representation))
        return request
    }
}

/// Appends query items in order.
/// - Parameter items: The unencoded items.
/// - Returns: The builder.
public func query(_ items: [QueryItem]) -> RequestBuilder {
    { request in
        var request = consume request
        request.appendQueryItems(items)
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
        var request = consume request
        request.appendQueryItem(item)
        return request
    }
}

/// Sets how later `query` and `form(encoding:)` builders write lists, booleans and dates, for a
/// whole API at once:
///
/// ```swift
/// let api = baseURL("https://api.example.com") <> encodingDefaults(
///     query: QueryEncoding(arrayEncoding: .comma, dateEncoding: .secondsSince1970),
///     form: FormEncoder(arrayEncoding: .indexed, boolEncoding: .numeric))
/// let search = .get |> api |> query("tags", ["a", "b"])    // tags=a,b
/// ```
///
/// A builder that names its own encoding (`query(_:_:encoding:)`, `form(encoding:encoder:)`)
/// uses that one instead. Builders applied before this one keep what they wrote.
/// - Parameters:
///   - query: The query strategies; `nil` keeps the current ones.
///   - form: The form encoder; `nil` keeps the current one.
/// - Returns: The builder.
public func encodingDefaults(query: QueryEncoding? = nil, form: FormEncoder? = nil) -> RequestBuilder {
    { request in
        var request = consume request
        if let query { request.encodingDefaults.query = query }
        if let form { request.encodingDefaults.form = form }
        return request
    }
}
