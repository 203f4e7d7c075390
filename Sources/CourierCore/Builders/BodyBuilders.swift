#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Sets the body to raw bytes and, when given, the `Content-Type` header.
/// - Parameters:
///   - data: The body bytes.
///   - mediaType: The body's media type (the `contentType:` argument); `nil` leaves the header as it is.
/// - Returns: The builder.
public func body(_ data: Data, contentType mediaType: MediaType? = .octetStream) -> RequestBuilder {
    { request in
        var request = consume request
        request.body = data
        if let mediaType { request.headers.set(.contentType, mediaType.rawValue) }
        return request
    }
}

/// Sets the body to UTF-8 text.
/// - Parameters:
///   - string: The text.
///   - mediaType: The media type (the `contentType:` argument); `text/plain; charset=utf-8` by default.
/// - Returns: The builder.
public func text(_ string: String, contentType mediaType: MediaType = .plainText) -> RequestBuilder {
    body(Data(string.utf8), contentType: mediaType)
}

/// Encodes `value` as JSON into the body and sets `Content-Type: application/json`.
///
/// The value is encoded once, when this builder is created. If encoding fails (a `Double.nan`,
/// a throwing `encode(to:)`), a ``RequestProblem/Kind/bodyEncodingFailed`` problem is recorded
/// and the request is never sent.
/// - Parameters:
///   - value: The value to encode.
///   - encoder: The encoder; a default `JSONEncoder` when omitted.
/// - Returns: The builder.
public func json(_ value: some Encodable, encoder: JSONEncoder = JSONEncoder()) -> RequestBuilder {
    bodyBuilder(contentType: .json) { try encoder.encode(value) }
}

/// Sets an `application/x-www-form-urlencoded` body from name–value pairs, in order.
///
/// ```swift
/// .post |> url("https://example.com/login") |> form(["user": "ada", "note": "a b+c"])
/// // body: user=ada&note=a+b%2Bc
/// ```
/// - Parameters:
///   - pairs: Unencoded names and values.
///   - encoder: Controls space encoding; the defaults follow HTML forms.
/// - Returns: The builder.
public func form(_ pairs: KeyValuePairs<String, String>, encoder: FormEncoder = FormEncoder()) -> RequestBuilder {
    let data = encoder.encode(pairs: pairs.map { ($0.key, $0.value) })
    return body(data, contentType: .formURLEncoded)
}

/// Encodes `value` as an `application/x-www-form-urlencoded` body (nested fields as `a[b]`), in
/// the order its `encode(to:)` writes them.
///
/// ```swift
/// .post |> url("https://example.com/signup") |> form(encoding: Signup(name: "Ada", tags: ["x"]))
/// // body: name=Ada&tags%5B%5D=x
/// ```
///
/// The value is encoded when this builder is created; its strategies (arrays, booleans, dates,
/// keys, spaces) are applied when the builder runs: `encoder` when given, else the request's
/// (``encodingDefaults(query:form:)``), else ``FormEncoder``'s defaults. An encoding failure is
/// recorded as a ``RequestProblem/Kind/bodyEncodingFailed`` problem.
/// - Parameters:
///   - value: A struct or dictionary to encode.
///   - encoder: The array, bool, date, key and space strategies; `nil` for the request's default.
/// - Returns: The builder.
public func form(encoding value: some Encodable, encoder: FormEncoder? = nil) -> RequestBuilder {
    let tree: FormTree
    do {
        tree = try FormEncoder.tree(for: value)
    } catch {
        // Reported exactly as any other body that fails to encode.
        return bodyBuilder(contentType: .formURLEncoded) { throw error }
    }
    return { request in
        let strategy = encoder ?? request.encodingDefaults.form ?? FormEncoder()
        return body(strategy.encode(pairs: strategy.pairs(for: tree)), contentType: .formURLEncoded)(request)
    }
}

/// Runs `encode` now and returns a builder that sets the bytes, or records why encoding failed.
func bodyBuilder(contentType mediaType: MediaType, encode: () throws -> Data) -> RequestBuilder {
    let problem: RequestProblem
    do {
        return body(try encode(), contentType: mediaType)
    } catch let error as RequestProblem {
        problem = error
    } catch let error as EncodingError {
        problem = RequestProblem(.bodyEncodingFailed, "the \(mediaType.essence) body could not be encoded: \(describe(error))")
    } catch {
        problem = RequestProblem(.bodyEncodingFailed, "the \(mediaType.essence) body could not be encoded: \(type(of: error))")
    }
    return { request in
        var request = consume request
        request.record(problem)
        return request
    }
}

/// Describes an encoding error by its coding path and explanation, never by the value.
private func describe(_ error: EncodingError) -> String {
    switch error {
    case .invalidValue(_, let context):
        let path = context.codingPath.map(\.stringValue).joined(separator: ".")
        return (path.isEmpty ? "" : "at \(path): ") + context.debugDescription
    @unknown default:
        return "encoding error"
    }
}

/// Sets a `multipart/form-data` body ([RFC 7578](https://www.rfc-editor.org/rfc/rfc7578)) and its
/// `Content-Type` with the boundary.
///
/// ```swift
/// .post |> url("https://example.com/upload") |> multipart([
///     .text("title", "Holiday"),
///     .file("photo", at: photoURL, contentType: "image/jpeg"),
/// ])
/// ```
///
/// Without files, the body is encoded once, when this builder is created. With file parts it
/// becomes a ``Request/bodySource``: the files are streamed from disk while the request is sent
/// (read again for a retry), so a large file is never held in memory. A file that is not
/// readable now or an invalid part is recorded as a ``RequestProblem/Kind/bodyEncodingFailed``
/// problem.
/// - Parameters:
///   - parts: The parts, in order.
///   - encoder: Chooses the boundary; inject one with a fixed random source in tests.
/// - Returns: The builder.
public func multipart(_ parts: [MultipartPart], encoder: MultipartEncoder = MultipartEncoder()) -> RequestBuilder {
    let hasFiles = parts.contains { if case .file = $0.content { true } else { false } }
    do {
        if hasFiles {
            let (segments, boundary) = try encoder.segments(parts)
            let source = BodySource(storage: .segments(segments))
            return { request in
                var request = consume request
                request.bodySource = source
                request.headers.set(.contentType, "multipart/form-data; boundary=\(boundary)")
                return request
            }
        }
        let (data, boundary) = try encoder.encode(parts)
        return body(data, contentType: MediaType(rawValue: "multipart/form-data; boundary=\(boundary)"))
    } catch {
        return { request in
            var request = consume request
            request.record(error)
            return request
        }
    }
}
