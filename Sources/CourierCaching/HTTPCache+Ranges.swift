import CourierCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension HTTPCache {
    /// A `GET` with a `Range`: a single byte range cut from a fresh stored complete (`200`)
    /// response, as a `206` with `Content-Range` (a `416` when it selects nothing); with an
    /// `If-Range` that does not match the stored response (a strong entity tag, or its exact
    /// `Last-Modified` date), the whole stored response (RFC 9110 §13.1.5). Anything else (several
    /// ranges, conditions, nothing fresh stored) goes to the origin untouched.
    func ranged(_ request: Request, key: String, next: Next) async throws -> StreamedResponse {
        let headers = request.headers
        guard let range = headers[.range].flatMap(ByteRange.init), !headers.contains(.ifNoneMatch), !headers.contains(.ifModifiedSince),
            request.cachePolicy == nil || request.cachePolicy == .useProtocolCachePolicy,
            let (entry, whole) = await freshStoredAnswer(for: request, key: key), entry.status == 200
        else { return try await next(request) }
        if let condition = headers[.ifRange], !Self.ifRangeMatches(condition, entry) { return whole }
        let length = entry.body.count
        guard let bytes = range.resolved(length: length) else {
            whole.body.cancel()
            var refused = whole.headers
            refused.set(.contentRange, "bytes */\(length)")
            refused.set(.contentLength, "0")
            return StreamedResponse(status: 416, headers: refused, url: whole.url, body: ByteStream(Data()))
        }
        whole.body.cancel()
        var partial = whole.headers
        partial.set(.contentRange, "bytes \(bytes.lowerBound)-\(bytes.upperBound)/\(length)")
        partial.set(.contentLength, String(bytes.count))
        let body = entry.body.subdata(in: (entry.body.startIndex + bytes.lowerBound)..<(entry.body.startIndex + bytes.upperBound + 1))
        return StreamedResponse(status: 206, headers: partial, url: whole.url, body: ByteStream(body))
    }

    /// Whether an `If-Range` value names the stored response: the same strong entity tag, or
    /// exactly its `Last-Modified` date (a weak tag never matches).
    static func ifRangeMatches(_ condition: String, _ entry: CachedResponse) -> Bool {
        let value = HTTPSyntax.trimmed(condition)
        if value.hasPrefix("\"") || value.hasPrefix("W/") {
            guard !value.hasPrefix("W/"), let stored = entry.headers[.eTag].map(HTTPSyntax.trimmed), !stored.hasPrefix("W/") else { return false }
            return stored == value
        }
        guard let date = HTTPDate.parse(value), let modified = entry.headers[.lastModified].flatMap({ HTTPDate.parse($0) }) else { return false }
        return date == modified
    }
}
