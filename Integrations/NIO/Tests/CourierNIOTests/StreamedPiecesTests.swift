@testable import CourierNIO
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

/// A streamed body's pieces, without a socket: what one read brings (an HTTP/2 stream's frames of
/// 16 KiB, a chunked body's chunks) reaches the reader as one piece when the read is over, so the
/// reader's thread is woken once a read, not once a frame; the order and the bytes are kept, and
/// what a read held goes out before the body's end or its failure.
@Suite("NIOExecutor: a streamed body's pieces, one a read")
struct StreamedPiecesTests {
    static func started() throws -> (EmbeddedChannel, HTTP1Call) {
        let channel = EmbeddedChannel()
        let handler = HTTP1Handler()
        try channel.pipeline.syncOperations.addHandler(handler)
        channel.embeddedEventLoop.run()
        _ = channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 9))
        let call = HTTP1Call(
            head: HTTPRequestHead(version: .http1_1, method: .GET, uri: "/"), bodyInHand: nil, upload: nil, progress: nil,
            gathers: false, eventLoop: channel.eventLoop)
        call.start(on: channel, handler: NIOLoopBound(handler, eventLoop: channel.eventLoop)) { _ in }
        channel.embeddedEventLoop.run()
        _ = try channel.readOutbound(as: HTTPClientRequestPart.self)
        return (channel, call)
    }

    static func pieces(_ call: HTTP1Call) async throws -> HTTP1Call.Pieces {
        let answer = try await call.answer.get()
        guard case .streaming(let pieces) = answer.body else { throw CancellationError() }
        return pieces
    }

    @Test func theBytesOfOneReadReachTheReaderAsOnePiece() async throws {
        let (channel, call) = try Self.started()
        channel.pipeline.fireChannelRead(HTTPClientResponsePart.head(HTTPResponseHead(version: .http1_1, status: .ok)))
        channel.pipeline.fireChannelReadComplete()
        let iterator = try await Self.pieces(call).makeAsyncIterator()
        // One read, three pieces: one piece for the reader.
        for text in ["first ", "second ", "third"] { channel.pipeline.fireChannelRead(HTTPClientResponsePart.body(ByteBuffer(string: text))) }
        channel.pipeline.fireChannelReadComplete()
        #expect(try await iterator.next() == ByteBuffer(string: "first second third"))
        // The next read's piece, then the end in the same read as its last bytes.
        channel.pipeline.fireChannelRead(HTTPClientResponsePart.body(ByteBuffer(string: "fourth")))
        channel.pipeline.fireChannelRead(HTTPClientResponsePart.body(ByteBuffer(string: " fifth")))
        channel.pipeline.fireChannelRead(HTTPClientResponsePart.end(nil))
        channel.pipeline.fireChannelReadComplete()
        #expect(try await iterator.next() == ByteBuffer(string: "fourth fifth"))
        #expect(try await iterator.next() == nil)
        _ = try? channel.finish()
    }

    @Test func whatAReadHeldComesBeforeAFailure() async throws {
        let (channel, call) = try Self.started()
        channel.pipeline.fireChannelRead(HTTPClientResponsePart.head(HTTPResponseHead(version: .http1_1, status: .ok)))
        channel.pipeline.fireChannelReadComplete()
        let iterator = try await Self.pieces(call).makeAsyncIterator()
        channel.pipeline.fireChannelRead(HTTPClientResponsePart.body(ByteBuffer(string: "cut")))
        // The connection closes before the read is over.
        channel.pipeline.fireChannelInactive()
        #expect(try await iterator.next() == ByteBuffer(string: "cut"))
        await #expect(throws: (any Error).self) { _ = try await iterator.next() }
        _ = try? channel.finish()
    }
}
