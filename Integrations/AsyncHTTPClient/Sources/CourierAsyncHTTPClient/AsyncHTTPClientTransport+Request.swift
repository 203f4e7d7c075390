import AsyncHTTPClient
@_spi(Transports) import CourierCore
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import NIOCore
import NIOHTTP1

extension AsyncHTTPClientTransport {
    /// Renders `request` as AsyncHTTPClient's request, with its URL string: validated unless the
    /// exchange did (`isValid`; an invalid request throws and is never sent).
    static func prepare(_ request: Request, progress: TransferProgress?, isValid: Bool) throws -> (HTTPClientRequest, url: String) {
        let url = isValid ? try request.renderedURLString() : try request.validatedURLString()
        var prepared = HTTPClientRequest(url: url)
        if request.method != .get { prepared.method = NIOHTTP1.HTTPMethod(rawValue: request.method.rawValue) }
        prepared.headers = headers(for: request)
        if let source = request.bodySource {
            // Its length taken once: the header's, and the one its chunks are held to.
            let upload = FramedBody(source)
            progress?.update(completed: 0, expected: upload.length)
            prepared.body = .stream(UploadChunks(upload: upload, progress: progress), length: upload.length.map { .known($0) } ?? .unknown)
        } else if let body = request.body {
            prepared.body = .bytes(body)
        }
        return (prepared, url)
    }

    /// Renders `request`, which has no body, for AsyncHTTPClient's delegate API (a response
    /// gathered whole), with its URL string.
    static func prepareForDelegate(_ request: Request, isValid: Bool) throws -> (HTTPClient.Request, url: String) {
        let url = isValid ? try request.renderedURLString() : try request.validatedURLString()
        do {
            let prepared = try HTTPClient.Request(
                url: url, method: NIOHTTP1.HTTPMethod(rawValue: request.method.rawValue), headers: headers(for: request))
            return (prepared, url)
        } catch {
            throw TransportErrors.courierError(for: error, request: request)
        }
    }

    /// The request's fields as AsyncHTTPClient sends them: framing left to it, `Accept-Encoding`
    /// offered for the codings Courier undoes.
    private static func headers(for request: Request) -> NIOHTTP1.HTTPHeaders {
        var headers = NIOHTTP1.HTTPHeaders()
        headers.reserveCapacity(request.headers.count + 1)
        var hasAcceptEncoding = false
        // Repeated names joined by the core's rule (one Cookie field, RFC 6265 §5.4).
        for field in request.headers.joinedFields {
            switch field.name.canonical {
            // AsyncHTTPClient frames the body itself, from its length.
            case "content-length", "transfer-encoding": continue
            case "accept-encoding": hasAcceptEncoding = true
            default: break
            }
            headers.add(name: field.name.rawValue, value: field.value)
        }
        // Courier decodes these itself (see `Inflater`), as URLSession does.
        if !hasAcceptEncoding { headers.add(name: "Accept-Encoding", value: "gzip, deflate") }
        return headers
    }
}

/// A body source read while it is sent, held to its declared length (``FramedBody``: no byte past
/// it, and its last bytes only once the source has ended), as the byte buffers AsyncHTTPClient
/// writes, counting upload progress as they are taken.
struct UploadChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let upload: FramedBody
    let progress: TransferProgress?

    func makeAsyncIterator() -> Iterator {
        Iterator(base: upload.makeAsyncIterator(), progress: progress, expected: upload.length)
    }

    struct Iterator: AsyncIteratorProtocol {
        var base: FramedBody.Iterator
        let progress: TransferProgress?
        let expected: Int64?
        var sent: Int64 = 0

        mutating func next() async throws -> ByteBuffer? {
            guard let chunk = try await base.next() else {
                progress?.update(completed: sent, expected: expected ?? sent)
                return nil
            }
            sent += Int64(chunk.count)
            progress?.update(completed: sent, expected: expected)
            return ByteBuffer(bytes: chunk)
        }
    }
}
