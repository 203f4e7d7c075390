import AsyncHTTPClient
import Courier
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// Reads one response body from AsyncHTTPClient: decompressed piece by piece, held to the size
/// limit, checked against its `Content-Length`, with the idle timer watching. Either gathered
/// whole (``collect()``) or handed to a reader through a ``Courier/ByteStream`` with backpressure
/// (``stream(bufferLimit:)``).
struct BodyReader: Sendable {
    let response: HTTPClientResponse
    let head: Response
    let method: Courier.HTTPMethod
    let request: Request
    let limit: Int?
    let timer: IdleTimer?

    /// Whether the body must be inflated: a single `gzip` or `deflate` coding, and a body to read.
    private func makeInflater() -> Inflater? {
        guard method != .head, head.status != 204, head.status != 304 else { return nil }
        return Inflater(contentEncoding: response.headers.first(name: "content-encoding"))
    }

    /// Reads the body, handing each decoded piece to `deliver` (which returns `false` to stop).
    /// - Returns: `false` when `deliver` stopped it.
    /// - Throws: ``Courier/CourierError``: too large, truncated, corrupt, or the transport's failure.
    private func pump(_ deliver: (Data) async -> Bool) async throws -> Bool {
        let inflater = makeInflater()
        var received = 0
        var delivered = 0
        let limit = self.limit
        let tooLarge = limit.map { CourierError(.responseTooLarge(limit: $0), request: request) }
        func hand(_ piece: Data) async throws -> Bool {
            delivered += piece.count
            if let limit, let tooLarge, delivered > limit { throw tooLarge }
            return await deliver(piece)
        }
        do {
            for try await buffer in response.body {
                timer?.touch()
                received += buffer.readableBytes
                // Large buffers are handed on without a copy (the Data keeps NIO's storage alive
                // until the reader drops it); small ones are copied rather than pin a read buffer.
                let data = Data(buffer: buffer, byteTransferStrategy: buffer.readableBytes >= 4096 ? .noCopy : .copy)
                if let inflater {
                    guard try await inflater.inflate(data, emit: hand) else { return false }
                } else {
                    guard try await hand(data) else { return false }
                }
            }
        } catch let error as CourierError {
            throw error.request == nil ? CourierError(error.cause, request: request, underlyingError: error.underlyingError) : error
        } catch {
            throw TransportErrors.courierError(for: error, request: request)
        }
        if let inflater, !inflater.isComplete, received > 0 {
            throw CourierError(
                .transport(TransportFailure(.truncatedBody, message: "the compressed body ended before its end")), request: request)
        }
        // Courier's framing rule, asked only when the count differs from a declared length (read
        // from AsyncHTTPClient's headers: the response's own stay unconverted).
        if let declared = declaredLength, declared != received,
            let failure = Response.framingFailure(
                status: head.status, method: method, contentLength: declared,
                contentEncoding: response.headers.first(name: "content-encoding"), bodyCount: received)
        {
            throw CourierError(.transport(failure), request: request)
        }
        return true
    }

    /// The whole body.
    func collect() async throws -> Data {
        var data = Data()
        if let length = declaredLength, length <= 16 << 20 { data.reserveCapacity(length) }
        _ = try await pump { piece in
            data.append(piece)
            return true
        }
        return data
    }

    /// The body as a stream that a task of its own fills, waiting whenever `bufferLimit` bytes
    /// are unread (so AsyncHTTPClient stops reading the socket). Stopping the stream (a `break`,
    /// a cancelled reader, a dropped stream, a deadline) cancels that task, which cancels the
    /// request.
    func stream(bufferLimit: Int) -> ByteStream {
        let (stream, continuation) = ByteStream.makeStream(bufferLimit: bufferLimit)
        let timer = self.timer
        let task = Task {
            do {
                let finished = try await pump { piece in
                    timer?.pause()
                    defer { timer?.resume() }
                    return await continuation.send(piece)
                }
                if finished { continuation.finish() }
            } catch {
                continuation.finish(throwing: error)
            }
            timer?.stop()
        }
        continuation.onTermination {
            task.cancel()
            timer?.stop()
        }
        if let timer {
            let timedOut = CourierError(.timedOut, request: request)
            timer.retarget {
                continuation.finish(throwing: timedOut)
                task.cancel()
            }
        }
        return stream
    }
}

extension BodyReader {
    /// The `Content-Length`, read by Courier's one parser (NIO's HTTP parser has checked the
    /// field already).
    fileprivate var declaredLength: Int? {
        response.headers.first(name: "content-length").flatMap(Response.contentLength)
    }
}
