import CourierCore
import NIOCore

/// Opens a tunnel through a SOCKS5 proxy by a ``SOCKS5Handshake``: sends what it says, feeds it
/// the proxy's bytes, and once the tunnel is open removes itself, leaving a byte stream to the
/// target. Bytes after the proxy's last answer fail the tunnel (the target cannot speak before
/// the client).
final class SOCKS5Handler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Succeeds when the tunnel is open; fails with a ``SOCKS5Failure`` or the connection's error.
    let established: EventLoopPromise<Void>
    private var handshake: SOCKS5Handshake
    private var started = false
    private var done = false

    init(target: SOCKS5Handshake.Target, credentials: NIOTransport.Proxy.Credentials?, eventLoop: any EventLoop) {
        self.handshake = SOCKS5Handshake(target: target, credentials: credentials)
        self.established = eventLoop.makePromise()
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context: context) }
    }

    /// A channel that never connected (or went before the tunnel opened) fails the wait.
    func handlerRemoved(context: ChannelHandlerContext) {
        finish(.failure(CourierError(.transport(TransportFailure(.cannotConnect, message: "the connection to the SOCKS5 proxy was not made")))))
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context: context)
        context.fireChannelActive()
    }

    private func start(context: ChannelHandlerContext) {
        guard !started else { return }
        started = true
        perform(handshake.start(), context: context)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !done else { return }
        let buffer = unwrapInboundIn(data)
        perform(handshake.received(buffer.readableBytesView), context: context)
    }

    private func perform(_ first: SOCKS5Handshake.Step, context: ChannelHandlerContext) {
        var step = first
        while true {
            switch step {
            case .send(let bytes):
                context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: bytes)), promise: nil)
                // Whatever the proxy sent ahead of time is read now.
                step = handshake.received([])
            case .wait:
                return
            case .established(let leftover):
                guard leftover.isEmpty else {
                    return fail(.notSOCKS5("bytes followed its answer to CONNECT"), context: context)
                }
                finish(.success(()))
                context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
                return
            case .fail(let failure):
                return fail(failure, context: context)
            }
        }
    }

    private func fail(_ failure: SOCKS5Failure, context: ChannelHandlerContext) {
        finish(.failure(failure))
        context.close(promise: nil)
    }

    private func finish(_ result: Result<Void, any Error>) {
        guard !done else { return }
        done = true
        established.completeWith(result)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        finish(.failure(error))
        context.close(promise: nil)
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish(.failure(CourierError(.transport(TransportFailure(.cannotConnect, message: "the SOCKS5 proxy closed the connection before the tunnel was open")))))
        context.fireChannelInactive()
    }
}
