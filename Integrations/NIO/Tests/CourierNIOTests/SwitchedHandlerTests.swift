@_spi(Transports) import Courier
@testable import CourierNIO
import Foundation
import NIOCore
import NIOEmbedded
import NIOPosix
import NIOConcurrencyHelpers
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

    /// Collects what a connection receives, and answers `promise` once `expecting` bytes came.
    final class Collector: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let received = NIOLockedValueBox<[UInt8]>([])
        let promise: EventLoopPromise<[UInt8]>
        let expecting: Int
        init(promise: EventLoopPromise<[UInt8]>, expecting: Int) {
            self.promise = promise
            self.expecting = expecting
        }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let bytes = unwrapInboundIn(data).readableBytesView
            let all = received.withLockedValue {
                $0 += bytes
                return $0
            }
            if all.count >= expecting { promise.succeed(all) }
        }
    }

    @Test("writes go out in the order they are made, from the event loop or from another thread")
    func writesKeepTheirOrder() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let arrived = loop.makePromise(of: [UInt8].self)
        let server = try await ServerBootstrap(group: group)
            .childChannelInitializer { $0.pipeline.addHandler(Collector(promise: arrived, expecting: 6)) }
            .bind(host: "127.0.0.1", port: 0).get()
        let client = try await ClientBootstrap(group: group).connect(to: try #require(server.localAddress)).get()
        // The reads' stream stays alive: a dropped one closes the channel.
        let (stream, continuation) = ByteStream.makeStream(bufferLimit: 1024)
        let bound = try await loop.submit {
            let handler = SwitchedHandler(continuation: continuation, request: .get |> url("ws://peer/"))
            try client.pipeline.syncOperations.addHandler(handler)
            return NIOLoopBound(handler, eventLoop: loop)
        }.get()
        let connection = SwitchedConnection(channel: client, handler: bound)
        @Sendable func fill(_ byte: UInt8) -> (UnsafeMutableRawBufferPointer) -> Void { { $0.initializeMemory(as: UInt8.self, repeating: byte) } }
        // The loop is busy with a task that will write (the socket's own frames, a pong or a
        // close, are written from the loop); meanwhile another thread writes first, which the
        // loop takes up after that task. The loop's write must not overtake it.
        let release = DispatchSemaphore(value: 0)
        loop.execute {
            release.wait()
            _ = connection.writeIfReady(count: 3, fill(2))
        }
        #expect(connection.writeIfReady(count: 3, fill(1)))
        release.signal()
        #expect(try await arrived.futureResult.get() == [1, 1, 1, 2, 2, 2])
        withExtendedLifetime(stream) {}
        try await client.close()
        try await server.close()
        try await group.shutdownGracefully()
    }
}
