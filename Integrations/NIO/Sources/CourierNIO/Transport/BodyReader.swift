@_spi(NIOTransports) import CourierNIOSupport
@_spi(Transports) import CourierCore
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import NIOCore
import NIOFoundationEssentialsCompat

/// Hands one response body to Courier, decoded piece by piece when it has a `gzip` or `deflate`
/// coding: whole (gathered on the event loop) or as a ``/Courier/ByteStream`` that a task fills
/// from the connection with backpressure, where the ``/Courier/Exchange`` holds it to the size
/// limit, the framing check and the idle timer as the pieces go in.
struct BodyReader: Sendable {
    let request: Request
    /// The `Content-Encoding` to undo, if any.
    let contentEncoding: String?

    /// The whole body, decoded; held to the size limit of `rules` as it is decoded (a small body
    /// that inflates past it stops there, with the error that keeps `head`).
    /// - Throws: ``/Courier/CourierError`` for a corrupt or cut compressed body, or past the limit.
    func whole(_ buffer: ByteBuffer?, rules: BodyRules? = nil, head: @autoclosure () -> Response) throws -> Data {
        guard let buffer, buffer.readableBytes > 0 else { return Data() }
        let data = Data(buffer: buffer, byteTransferStrategy: buffer.readableBytes >= 4096 ? .noCopy : .copy)
        return try Inflater.decodeWhole(data, contentEncoding: contentEncoding, rules: rules, request: request, head: head)
    }

    /// The body as a stream that a task of its own fills, waiting whenever `bufferLimit` bytes
    /// are unread (and the connection stops reading meanwhile). Stopping the stream (a `break`, a
    /// cancelled reader, a dropped stream, a limit, the idle timer, a deadline) cancels that task,
    /// which closes the connection.
    func stream(_ pieces: HTTP1Call.Pieces, bufferLimit: Int) -> ByteStream {
        let (stream, continuation) = ByteStream.makeStream(bufferLimit: bufferLimit)
        let task = Task {
            do {
                let inflater = Inflater(contentEncoding: contentEncoding)
                var received = 0
                for try await buffer in pieces {
                    received += buffer.readableBytes
                    let data = Data(buffer: buffer, byteTransferStrategy: buffer.readableBytes >= 4096 ? .noCopy : .copy)
                    if let inflater {
                        guard try await inflater.inflate(data, emit: { await continuation.send($0) }) else { return }
                    } else {
                        guard await continuation.send(data) else { return }
                    }
                }
                if let inflater, !inflater.isComplete, received > 0 { throw truncated }
                continuation.finish()
            } catch {
                continuation.finish(throwing: TransportErrors.courierError(for: error, request: request, duringBody: true))
            }
        }
        continuation.onTermination { task.cancel() }
        return stream
    }

    private var truncated: CourierError {
        CourierError(.transport(TransportFailure(.truncatedBody, message: "the compressed body ended before its end")), request: request)
    }
}
