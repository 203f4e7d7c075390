import AsyncHTTPClient
@_spi(Transports) import CourierCore
@_spi(NIOTransports) import CourierNIOSupport
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import NIOCore
import NIOFoundationEssentialsCompat
import NIOHTTP1

/// Reads one response body from AsyncHTTPClient, decompressed piece by piece: either gathered
/// whole (``collect(rules:)``; or on the event loop, ``GatheringDelegate``, then
/// ``decode(_:contentEncoding:rules:request:head:)``) or handed to a reader through a ``/Courier/ByteStream`` with backpressure
/// (``stream(bufferLimit:)``), where the ``/Courier/Exchange`` holds it to the size limit, the
/// framing check and the idle timer as the pieces go in.
struct BodyReader: Sendable {
    let response: HTTPClientResponse
    let head: Response
    let method: CourierCore.HTTPMethod
    let request: Request
    /// Where the hop's body end is recorded, when something reads it.
    let timings: HopTimings.Recorder?

    /// Whether the body must be inflated: a single `gzip` or `deflate` coding, and a body to read.
    private func makeInflater() -> Inflater? {
        guard method != .head, head.status != 204, head.status != 304 else { return nil }
        return Inflater(contentEncoding: response.headers.first(name: "content-encoding"))
    }

    /// Reads the body, handing each decoded piece to `deliver` (which returns `false` to stop).
    /// - Returns: `false` when `deliver` stopped it.
    /// - Throws: ``/Courier/CourierError``: truncated or corrupt compressed data, or the
    ///   transport's failure.
    private func pump(_ deliver: (Data) async -> Bool) async throws -> Bool {
        // Before the reader learns of the end: it may read the timings then.
        defer { timings?.mark(.bodyEnded) }
        let inflater = makeInflater()
        var received = 0
        do {
            for try await buffer in response.body {
                received += buffer.readableBytes
                // Large buffers are handed on without a copy (the Data keeps NIO's storage alive
                // until the reader drops it); small ones are copied rather than pin a read buffer.
                let data = Data(buffer: buffer, byteTransferStrategy: buffer.readableBytes >= 4096 ? .noCopy : .copy)
                if let inflater {
                    guard try await inflater.inflate(data, emit: deliver) else { return false }
                } else {
                    guard await deliver(data) else { return false }
                }
            }
        } catch let error as CourierError {
            throw error.request == nil ? CourierError(error.cause, request: request, underlyingError: error.underlyingError) : error
        } catch {
            throw TransportErrors.courierError(for: error, request: request, duringBody: true)
        }
        if let inflater, !inflater.isComplete, received > 0 {
            throw CourierError(
                .transport(TransportFailure(.truncatedBody, message: "the compressed body ended before its end")), request: request)
        }
        return true
    }

    /// The whole body, decoded, held to the size limit of `rules` as it comes (each piece is
    /// activity for their idle timer).
    /// - Throws: ``/Courier/CourierError``: past the limit (keeping the head), a corrupt or cut
    ///   compressed body, or the transport's failure.
    func collect(rules: BodyRules?) async throws -> Data {
        var data = Data()
        var pieces = 0
        var overLimit = false
        let limit = rules?.maximumSize ?? .max
        _ = try await pump { piece in
            rules?.noteActivity()
            pieces += 1
            guard data.count + piece.count <= limit else {
                overLimit = true
                return false
            }
            if pieces == 1 {
                // Most small bodies are one piece: it becomes the body as it is, not copied again.
                data = piece
                return true
            }
            if pieces == 2, let length = response.headers.first(name: "content-length").flatMap(Response.contentLength),
                length <= 16 << 20
            {
                data.reserveCapacity(length)
            }
            data.append(piece)
            return true
        }
        if overLimit, let rules { throw rules.tooLarge(head: head) }
        return data
    }

    /// A body gathered whole, decoded when it has a `contentEncoding`, its decoded bytes held to
    /// the size limit of `rules` as they come (a small body that inflates past it stops there,
    /// with the error that keeps `head`).
    /// - Throws: ``/Courier/CourierError`` for a corrupt or cut compressed body, or past the limit.
    static func decode(
        _ buffer: ByteBuffer?, contentEncoding: String?, rules: BodyRules?, request: Request, head: @autoclosure () -> Response
    ) throws(CourierError) -> Data {
        guard let buffer, buffer.readableBytes > 0 else { return Data() }
        // Large buffers are handed on without a copy (the Data keeps NIO's storage alive until
        // the reader drops it); small ones are copied rather than pin a read buffer.
        let data = Data(buffer: buffer, byteTransferStrategy: buffer.readableBytes >= 4096 ? .noCopy : .copy)
        return try Inflater.decodeWhole(data, contentEncoding: contentEncoding, rules: rules, request: request, head: head)
    }

    /// The body as a stream that a task of its own fills, waiting whenever `bufferLimit` bytes
    /// are unread (so AsyncHTTPClient stops reading the socket). Stopping the stream (a `break`,
    /// a cancelled reader, a dropped stream, a limit, the idle timer, a deadline) cancels that
    /// task, which cancels the request.
    func stream(bufferLimit: Int) -> ByteStream {
        let (stream, continuation) = ByteStream.makeStream(bufferLimit: bufferLimit)
        let task = Task {
            do {
                let finished = try await pump { piece in await continuation.send(piece) }
                if finished { continuation.finish() }
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination { task.cancel() }
        return stream
    }
}
