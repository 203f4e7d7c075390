@_spi(Transports) import CourierCore
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import NIOConcurrencyHelpers
import NIOCore
import NIOFoundationEssentialsCompat

/// A connection the server switched to another protocol, as Courier's core takes it
/// (``/Courier/UpgradedConnection``), with backpressure both ways: what the server sends goes
/// from the event loop straight into the `101`'s body stream (``SwitchedHandler``, no task in
/// between), and a write waits while the channel is not writable. The channel closes when
/// either side ends: the body stream stopped, ``close()``, the server's close.
struct SwitchedConnection: UpgradedConnection {
    let channel: any Channel
    let handler: NIOLoopBound<SwitchedHandler>
    /// Writes handed to the event loop from other threads and not yet made there. A write made
    /// on the loop goes at once only when there are none: otherwise it would overtake them (a
    /// close frame before the message sent just before it).
    private let handedToLoop = NIOLockedValueBox(0)

    init(channel: any Channel, handler: NIOLoopBound<SwitchedHandler>) {
        self.channel = channel
        self.handler = handler
    }

    func write(_ bytes: Data) async throws {
        try await write(count: bytes.count) { target in _ = bytes.copyBytes(to: target) }
    }

    /// Fills a buffer from the channel's allocator, the one the socket writes from: a frame is
    /// encoded once, not into a `Data` and then copied.
    func write(count: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void) async throws {
        guard channel.isActive else { throw ChannelError.ioOnClosedChannel }
        if !channel.isWritable {
            let writable = channel.eventLoop.makePromise(of: Void.self)
            channel.eventLoop.execute { [handler] in handler.value.whenWritable(writable) }
            try await writable.futureResult.get()
        }
        send(count: count, fill)
    }

    /// Writes at once while the channel is open and writable (its buffer below the high-water
    /// mark); otherwise leaves it to ``write(count:_:)``, which waits.
    func writeIfReady(count: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void) -> Bool {
        guard channel.isActive, channel.isWritable else { return false }
        send(count: count, fill)
        return true
    }

    private func send(count: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void) {
        let count = max(0, count)
        var buffer = channel.allocator.buffer(capacity: count)
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { free in
            fill(UnsafeMutableRawBufferPointer(rebasing: free[..<count]))
            return count
        }
        // The socket's engine writes one frame at a time (its turn), so nothing else is written in
        // the middle of it, and each write is made, or queued on the loop, before the next begins.
        let loop = channel.eventLoop
        if loop.inEventLoop, handedToLoop.withLockedValue({ $0 }) == 0 {
            channel.writeAndFlush(buffer, promise: nil)
            return
        }
        handedToLoop.withLockedValue { $0 += 1 }
        loop.execute { [channel, handedToLoop, buffer] in
            handedToLoop.withLockedValue { $0 -= 1 }
            channel.writeAndFlush(buffer, promise: nil)
        }
    }

    func close() {
        channel.close(promise: nil)
    }
}

/// The last handler of a switched channel: hands each read to the body stream on the event loop.
/// When the stream's buffer is full, the chunk waits here and the handler holds the channel's
/// reads (the socket is not read) until the reader has taken half of it; the stream's end
/// follows the channel's, after what waits here.
final class SwitchedHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer

    private let continuation: ByteStream.Continuation
    private let request: Request
    private var context: ChannelHandlerContext?
    /// Chunks read while the stream was full, in order.
    private var waiting: [Data] = []
    private var paused = false
    /// The pipeline asked to read while paused: the read is made once there is room.
    private var readHeld = false
    /// The channel ended normally while chunks waited: the stream ends after them.
    private var endsAfterWaiting = false
    private var writableWaiters: [EventLoopPromise<Void>] = []
    /// What the stream runs when it has room again (made once, in ``handlerAdded(context:)``:
    /// not a closure per read).
    private var whenRoom: (@Sendable (Bool) -> Void)?

    init(continuation: ByteStream.Continuation, request: Request) {
        self.continuation = continuation
        self.request = request
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        let loop = context.eventLoop
        let bound = NIOLoopBound(self, eventLoop: loop)
        whenRoom = { open in loop.execute { bound.value.roomMade(open) } }
        // The reader stopped the stream (it broke off, was cancelled, or dropped the socket).
        let channel = context.channel
        continuation.onTermination { channel.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        whenRoom = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        let chunk = Data(buffer: buffer, byteTransferStrategy: buffer.readableBytes >= 4096 ? .noCopy : .copy)
        if paused {
            waiting.append(chunk)
        } else {
            offer(chunk, context: context)
        }
    }

    /// Hands `chunk` to the stream; pauses when the stream is full.
    private func offer(_ chunk: Data, context: ChannelHandlerContext) {
        guard let whenRoom else { return }
        switch continuation.offer(chunk, whenRoom: whenRoom) {
        case .taken:
            break
        case .full:
            paused = true
            waiting.insert(chunk, at: 0)
        case .closed:
            waiting = []
            context.close(promise: nil)
        }
    }

    /// The reader made room (`open`) or stopped the stream: what waits goes, then the held read.
    private func roomMade(_ open: Bool) {
        guard open, let context else { return }
        paused = false
        while !waiting.isEmpty, !paused {
            offer(waiting.removeFirst(), context: context)
        }
        guard !paused else { return }
        if endsAfterWaiting {
            continuation.finish()
            return
        }
        if readHeld {
            readHeld = false
            context.read()
        }
    }

    func read(context: ChannelHandlerContext) {
        if paused {
            readHeld = true
        } else {
            context.read()
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if paused {
            endsAfterWaiting = true
        } else {
            continuation.finish()
        }
        failWritableWaiters()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        waiting = []
        continuation.finish(throwing: TransportErrors.courierError(for: error, request: request, duringBody: true))
        failWritableWaiters()
        context.close(promise: nil)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            let waiters = writableWaiters
            writableWaiters = []
            for waiter in waiters { waiter.succeed() }
        }
        context.fireChannelWritabilityChanged()
    }

    /// Succeeds `promise` once the channel can take writes again; fails it once the channel is
    /// closed.
    func whenWritable(_ promise: EventLoopPromise<Void>) {
        guard let context, context.channel.isActive else {
            promise.fail(ChannelError.ioOnClosedChannel)
            return
        }
        if context.channel.isWritable {
            promise.succeed()
        } else {
            writableWaiters.append(promise)
        }
    }

    private func failWritableWaiters() {
        let waiters = writableWaiters
        writableWaiters = []
        for waiter in waiters { waiter.fail(ChannelError.ioOnClosedChannel) }
    }
}
