/// Sets a header, replacing any fields with the same name (compared case-insensitively).
///
/// A name that is not a token, or a value containing CR, LF, NUL or another control character,
/// is reported as a ``RequestProblem`` when the request is rendered; it is never sent. Tabs are
/// allowed. Non-ASCII characters are sent as their UTF-8 bytes (RFC 9110 calls them `obs-text`);
/// servers that read header bytes as Latin-1 will see them differently, so prefer ASCII, or an
/// encoding the server documents (for example RFC 8187's `UTF-8''…` for parameters).
/// - Parameters:
///   - name: The header name.
///   - value: The value.
///   - sensitive: Whether to hide the value in descriptions, logs and errors. Standard
///     credential headers (``Redaction/standardHeaders``) are hidden anyway.
/// - Returns: The builder.
@inlinable
public func header(_ name: HeaderName, _ value: String, sensitive: Bool = false) -> RequestBuilder {
    { request in
        var request = consume request
        request.headers.set(name, value)
        if sensitive {
            request.redaction.headers.insert(name)
            request.headers.markSensitive(name)
        }
        return request
    }
}

/// Appends a header field, keeping existing fields with the same name.
/// - Parameters:
///   - name: The header name.
///   - value: The value.
/// - Returns: The builder.
public func addingHeader(_ name: HeaderName, _ value: String) -> RequestBuilder {
    { request in
        var request = consume request
        request.headers.add(name, value)
        return request
    }
}

/// Removes every field with the given name.
/// - Parameter name: The header name, in any letter case.
/// - Returns: The builder.
public func removingHeader(_ name: HeaderName) -> RequestBuilder {
    { request in
        var request = consume request
        request.headers.remove(name)
        return request
    }
}

/// Sets the `Accept` header.
/// - Parameter mediaType: The acceptable media type, for example `.json`.
/// - Returns: The builder.
@inlinable
public func accept(_ mediaType: MediaType) -> RequestBuilder {
    header(.accept, mediaType.rawValue)
}

/// Sets the `Content-Type` header.
/// - Parameter mediaType: The body's media type.
/// - Returns: The builder.
@inlinable
public func contentType(_ mediaType: MediaType) -> RequestBuilder {
    header(.contentType, mediaType.rawValue)
}

/// Sets the `User-Agent` header.
/// - Parameter value: The product tokens, for example `"MyApp/1.2 Courier"`.
/// - Returns: The builder.
public func userAgent(_ value: String) -> RequestBuilder {
    header(.userAgent, value)
}
