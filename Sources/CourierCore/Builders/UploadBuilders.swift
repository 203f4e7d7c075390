#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Sets the body to a file, uploaded from disk when the request is sent (never loaded whole),
/// with its `Content-Type`.
///
/// ```swift
/// .put |> url("https://uploads.example.com/v1/backup") |> upload(backupFile)
/// ```
/// - Parameters:
///   - fileURL: A file URL.
///   - contentType: The media type; `application/octet-stream` by default, `nil` to leave the
///     header alone.
/// - Returns: The builder.
public func upload(_ fileURL: URL, contentType: MediaType? = .octetStream) -> RequestBuilder {
    { request in
        var request = consume request
        request.bodySource = .file(fileURL)
        if let contentType { request.headers.set(.contentType, contentType.rawValue) }
        return request
    }
}

/// Sets the body to the bytes of an `AsyncSequence`, read once while the request is sent.
///
/// The request is not retried (the sequence cannot be read twice).
/// - Parameters:
///   - sequence: The chunks.
///   - length: The total length, when known.
///   - contentType: The media type; `application/octet-stream` by default.
/// - Returns: The builder.
public func upload<S: AsyncSequence & Sendable>(
    _ sequence: S, length: Int64? = nil, contentType: MediaType? = .octetStream
) -> RequestBuilder where S.Element == Data {
    let source = BodySource.sequence(sequence, length: length)
    return { request in
        var request = consume request
        request.bodySource = source
        if let contentType { request.headers.set(.contentType, contentType.rawValue) }
        return request
    }
}
