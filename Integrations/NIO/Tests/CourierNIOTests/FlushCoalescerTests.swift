@testable import CourierNIO
import NIOCore
import NIOEmbedded
import Testing

/// An HTTP/2 connection's flushes, without a socket: the streams' flushes of one turn of the
/// event loop reach the socket as one, once the loop has run what was queued; a close carries
/// out a flush still pending before it, so nothing written is dropped.
@Suite("NIOExecutor: an HTTP/2 connection's flushes, one a turn of the loop")
struct FlushCoalescerTests {
    /// Counts the flushes that reach the socket's side of the pipeline.
    final class Flushes: ChannelOutboundHandler {
        typealias OutboundIn = ByteBuffer
        var count = 0
        func flush(context: ChannelHandlerContext) {
            count += 1
            context.flush()
        }
    }

    static func channel() throws -> (EmbeddedChannel, Flushes) {
        let flushes = Flushes()
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(flushes)
        try channel.pipeline.syncOperations.addHandler(FlushCoalescer())
        return (channel, flushes)
    }

    @Test func theFlushesOfOneTurnGoOutAsOneAfterTheQueuedTasks() throws {
        let (channel, flushes) = try Self.channel()
        for text in ["first", "second", "third"] {
            channel.write(ByteBuffer(string: text), promise: nil)
            channel.flush()
        }
        // Nothing has gone out while the turn's tasks have not run.
        #expect(flushes.count == 0)
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)
        channel.embeddedEventLoop.run()
        #expect(flushes.count == 1)
        #expect(try channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(string: "first"))
        #expect(try channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(string: "second"))
        #expect(try channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(string: "third"))
        // The next turn's flush is its own.
        channel.write(ByteBuffer(string: "fourth"), promise: nil)
        channel.flush()
        channel.embeddedEventLoop.run()
        #expect(flushes.count == 2)
        #expect(try channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(string: "fourth"))
        _ = try channel.finish()
    }

    @Test func aCloseCarriesOutThePendingFlushFirst() throws {
        let (channel, flushes) = try Self.channel()
        channel.write(ByteBuffer(string: "GOAWAY"), promise: nil)
        channel.flush()
        channel.close(promise: nil)
        #expect(flushes.count == 1)
        #expect(try channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(string: "GOAWAY"))
        // The task queued for it finds nothing left to do.
        channel.embeddedEventLoop.run()
        #expect(flushes.count == 1)
    }
}
