import NIOCore

/// Stands between TLS (or the socket) and the HTTP/2 handler of a connection and turns the
/// flushes asked for in one turn of the event loop into one: every stream's request is written
/// by a task of its own on the loop, and SwiftNIO's multiplexer flushes the connection for each,
/// so sixteen callers meant sixteen TLS records and sixteen `write` calls where one carries all
/// of their frames. A flush is carried out once the tasks already queued on the loop have run
/// (the loop runs them before it waits for I/O again), so nothing waits longer than that turn;
/// a close carries out a flush still pending first, so nothing written before it is dropped.
final class FlushCoalescer: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = NIOAny
    typealias OutboundOut = NIOAny

    /// A flush was asked for and is not carried out yet.
    private var pending = false

    func flush(context: ChannelHandlerContext) {
        guard !pending else { return }
        pending = true
        let loop = context.eventLoop.assumeIsolated()
        loop.execute { [self] in flushPending(context: context) }
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        flushPending(context: context)
        context.close(mode: mode, promise: promise)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        flushPending(context: context)
    }

    /// Carries out the flush asked for, if it is still pending.
    private func flushPending(context: ChannelHandlerContext) {
        guard pending else { return }
        pending = false
        context.flush()
    }
}
