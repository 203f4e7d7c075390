import AsyncHTTPClient
@_spi(Transports) import CourierCore
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import NIOConcurrencyHelpers
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

    /// Renders `request` for AsyncHTTPClient's delegate API (a response gathered whole), with its
    /// URL string and, for a body read while it is sent, the task that sends it (cancelled when
    /// the hop fails first).
    static func prepareForDelegate(
        _ request: Request, progress: TransferProgress?, isValid: Bool, eventLoop: any EventLoop
    ) throws -> (HTTPClient.Request, url: String, upload: Upload?) {
        let url = isValid ? try request.renderedURLString() : try request.validatedURLString()
        var body: HTTPClient.Body?
        var sending: Upload?
        if let source = request.bodySource {
            let framed = FramedBody(source)
            progress?.update(completed: 0, expected: framed.length)
            let upload = Upload(UploadChunks(upload: framed, progress: progress), eventLoop: eventLoop)
            body = .stream(contentLength: framed.length) { writer in upload.start(writer) }
            sending = upload
        } else if let data = request.body {
            body = .bytes(data)
        }
        let prepared: HTTPClient.Request
        do {
            prepared = try HTTPClient.Request(
                url: url, method: NIOHTTP1.HTTPMethod(rawValue: request.method.rawValue), headers: headers(for: request), body: body)
        } catch {
            throw TransportErrors.courierError(for: error, request: request)
        }
        return (prepared, url, sending)
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

/// A body read while it is sent through AsyncHTTPClient's delegate API: a task reads the chunks
/// and writes each once the one before it is written (so a slow socket slows the producer), and
/// is cancelled when the hop fails first, so a producer that waits never outlives its hop.
final class Upload: Sendable {
    private let chunks: UploadChunks
    private let eventLoop: any EventLoop
    private let task = NIOLockedValueBox<(task: Task<Void, Never>?, cancelled: Bool)>((nil, false))

    init(_ chunks: UploadChunks, eventLoop: any EventLoop) {
        self.chunks = chunks
        self.eventLoop = eventLoop
    }

    /// Starts sending through `writer` (AsyncHTTPClient calls this once the request may send its
    /// body); the future completes when the last chunk is handed over.
    func start(_ writer: HTTPClient.Body.StreamWriter) -> EventLoopFuture<Void> {
        let promise = eventLoop.makePromise(of: Void.self)
        let chunks = chunks
        let sending = Task {
            do {
                // A body of known length is declared finished as its last chunk is handed over,
                // not once that chunk is written: AsyncHTTPClient writes the two in order, and a
                // server that answers as soon as it has the last byte must never find the body
                // still open (AsyncHTTPClient would fail the hop as a cancelled upload). A chunked
                // body is not complete for the server before its end, written after this.
                let length = chunks.upload.length
                var sent: Int64 = 0
                for try await chunk in chunks {
                    sent += Int64(chunk.readableBytes)
                    if let length, sent >= length {
                        // A failed write fails the hop through the connection.
                        _ = writer.write(.byteBuffer(chunk))
                        break
                    }
                    try await writer.write(.byteBuffer(chunk)).get()
                }
                promise.succeed()
            } catch {
                promise.fail(error)
            }
        }
        let cancelled = task.withLockedValue { state in
            state.task = sending
            return state.cancelled
        }
        if cancelled { sending.cancel() }
        return promise.futureResult
    }

    /// Stops sending (the hop ended first).
    func cancel() {
        task.withLockedValue { state in
            state.cancelled = true
            return state.task
        }?.cancel()
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
