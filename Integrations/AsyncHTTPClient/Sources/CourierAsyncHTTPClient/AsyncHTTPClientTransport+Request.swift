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
    /// exchange did (`isValid`; an invalid request throws and is never sent). A streamed body
    /// reads each chunk only once `loops` (the client's event loops) have taken the one before.
    static func prepare(_ request: Request, progress: TransferProgress?, isValid: Bool, loops: [any EventLoop] = [])
        throws -> (HTTPClientRequest, url: String)
    {
        let url = isValid ? try request.renderedURLString() : try request.validatedURLString()
        var prepared = HTTPClientRequest(url: url)
        if request.method != .get { prepared.method = NIOHTTP1.HTTPMethod(rawValue: request.method.rawValue) }
        prepared.headers = headers(for: request)
        if let source = request.bodySource {
            // Its length taken once: the header's, and the one its chunks are held to.
            let upload = FramedBody(source)
            progress?.update(completed: 0, expected: upload.length)
            prepared.body = .stream(
                UploadChunks(upload: upload, progress: progress, loops: loops), length: upload.length.map { .known($0) } ?? .unknown)
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
///
/// **Read no further ahead than the event loop.** AsyncHTTPClient's async API hands each part to
/// the connection's event loop (`EventLoop.execute`) and asks for the next at once; it pauses only
/// once the loop has written enough to find the channel unwritable. A loop that is busy
/// elsewhere runs none of those writes, so the whole source would be read into its queue. Once
/// ``readAhead`` bytes have been handed over since it last did, the iterator waits for a no-op
/// task on each of the client's loops before it reads on: tasks run in order, so by then the loop
/// has run the writes of every chunk before (and paused the stream if the channel filled). What
/// is read ahead of the loop is at most ``readAhead`` and a chunk, however busy the loop, at two
/// task hops per ``readAhead`` bytes.
struct UploadChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let upload: FramedBody
    let progress: TransferProgress?
    /// The client's event loops (any of them may hold the connection).
    let loops: [any EventLoop]
    /// How many bytes may be handed over before the loops must have taken them: 256 KiB.
    static let readAhead = 256 << 10

    func makeAsyncIterator() -> Iterator {
        Iterator(base: upload.makeAsyncIterator(), progress: progress, expected: upload.length, loops: loops)
    }

    struct Iterator: AsyncIteratorProtocol {
        var base: FramedBody.Iterator
        let progress: TransferProgress?
        let expected: Int64?
        let loops: [any EventLoop]
        var sent: Int64 = 0
        /// Bytes handed over since the loops last caught up.
        var ahead = 0

        mutating func next() async throws -> ByteBuffer? {
            if ahead >= UploadChunks.readAhead {
                for loop in loops { try await loop.submit {}.get() }
                ahead = 0
            }
            guard let chunk = try await base.next() else {
                progress?.update(completed: sent, expected: expected ?? sent)
                return nil
            }
            sent += Int64(chunk.count)
            ahead += chunk.count
            progress?.update(completed: sent, expected: expected)
            return ByteBuffer(bytes: chunk)
        }
    }
}
