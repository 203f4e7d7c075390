@_spi(Transports) import Courier
@testable import CourierNIO
import Foundation
import NIOCore
import NIOEmbedded
import Testing

/// A switched connection's bytes go from the event loop into the body stream with backpressure,
/// without a socket: when the stream is full the chunk waits in the handler and the channel's
/// reads are held (the socket is not read), until the reader takes half the buffer.
@Suite("NIOExecutor: a switched connection's reads, held while the stream is full")
struct SwitchedHandlerTests {
    /// Counts the reads that reach the channel.
    final class Reads: ChannelOutboundHandler {
        typealias OutboundIn = ByteBuffer
        var count = 0
        func read(context: ChannelHandlerContext) {
            count += 1
            context.read()
        }
    }

    static func chunk(_ byte: UInt8) -> ByteBuffer { ByteBuffer(repeating: byte, count: 600) }

    @Test("a full stream holds the chunk and the reads; the reader's progress lets them go, in order; the end comes after them")
    func backpressure() async throws {
        let (stream, continuation) = ByteStream.makeStream(bufferLimit: 1024)
        let reads = Reads()
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(reads)
        try channel.pipeline.syncOperations.addHandler(SwitchedHandler(continuation: continuation, request: .get |> url("ws://peer/")))
        try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).get()
        // 600 bytes fit; 600 more would make 1,200 of 1,024: the second chunk waits, and so does
        // a third read in the same cycle.
        try channel.writeInbound(Self.chunk(1))
        try channel.writeInbound(Self.chunk(2))
        try channel.writeInbound(Self.chunk(3))
        let before = reads.count
        channel.read()
        #expect(reads.count == before, "a read while the stream is full reaches the channel")
        var iterator = stream.makeAsyncIterator()
        #expect(try await iterator.next() == Data(repeating: 1, count: 600))
        channel.embeddedEventLoop.run()
        // Room for the second chunk only: the third still waits, the read is still held.
        #expect(reads.count == before)
        #expect(try await iterator.next() == Data(repeating: 2, count: 600))
        channel.embeddedEventLoop.run()
        #expect(reads.count == before + 1, "the held read goes once everything waiting is in the stream")
        channel.read()
        #expect(reads.count == before + 2)
        // The server closes: the stream ends after the chunk it holds.
        try await channel.close()
        #expect(try await iterator.next() == Data(repeating: 3, count: 600))
        #expect(try await iterator.next() == nil)
    }

    @Test("the end waits behind held chunks; a reader that stops the stream closes the channel")
    func endAndStop() async throws {
        let (stream, continuation) = ByteStream.makeStream(bufferLimit: 1024)
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(SwitchedHandler(continuation: continuation, request: .get |> url("ws://peer/")))
        try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).get()
        try channel.writeInbound(Self.chunk(1))
        try channel.writeInbound(Self.chunk(2))
        channel.pipeline.fireChannelInactive()
        var iterator = stream.makeAsyncIterator()
        #expect(try await iterator.next() == Data(repeating: 1, count: 600))
        channel.embeddedEventLoop.run()
        #expect(try await iterator.next() == Data(repeating: 2, count: 600))
        #expect(try await iterator.next() == nil)

        let (stopped, feed) = ByteStream.makeStream(bufferLimit: 1024)
        let other = EmbeddedChannel()
        try other.pipeline.syncOperations.addHandler(SwitchedHandler(continuation: feed, request: .get |> url("ws://peer/")))
        try await other.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).get()
        try other.writeInbound(Self.chunk(1))
        try other.writeInbound(Self.chunk(2))
        stopped.cancel()
        other.embeddedEventLoop.run()
        #expect(!other.isActive)
    }
}
