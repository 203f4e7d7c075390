import CourierCore
import NIOCore
import NIOHTTP1

/// The last handler of an HTTP/1.1 connection's pipeline, or of an HTTP/2 stream's (after the
/// codec that turns frames into HTTP/1-style parts): it feeds every event to an
/// ``HTTP1StateMachine``, which decides, and carries out its actions: writes the request, reads,
/// hands the response to the waiting ``HTTP1Call``, tells its connection's pool whether the
/// connection may be lent again, closes it.
///
/// Everything here runs on the channel's event loop.
package final class HTTP1Handler: ChannelDuplexHandler {
    package typealias InboundIn = HTTPClientResponsePart
    package typealias OutboundIn = HTTPClientRequestPart
    package typealias OutboundOut = HTTPClientRequestPart

    private var machine: HTTP1StateMachine
    /// The request in flight, if any.
    private var call: HTTP1Call?
    private var context: ChannelHandlerContext?
    /// Told once the connection is idle again (`true`) or must not be reused (`false`).
    package var onIdle: ((_ reusable: Bool) -> Void)?

    /// A handler for an HTTP/1.1 connection, or for one HTTP/2 stream (`isStream`: one exchange,
    /// and the stream is not closed after a whole one; see ``HTTP1StateMachine``).
    package init(isStream: Bool = false) {
        machine = HTTP1StateMachine(isStream: isStream)
    }

    package func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    package func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    /// Starts `call`: writes its head (and its body when it is in hand).
    package func start(_ call: HTTP1Call) {
        // Gone from its pipeline: the connection closed (with the failure that closed it, if one
        // said why, as a TLS 1.3 server refusing a client certificate after the handshake does).
        let actions = machine.start(body: call.streamsBody ? .streamed : .whole, active: context?.channel.isActive ?? false)
        guard let context else {
            if case .failCall(let error)? = actions.first { call.fail(error) }
            return
        }
        if case .failCall(let error)? = actions.first {
            call.fail(error)
            return
        }
        self.call = call
        call.connectionStarted(context: context, handler: self)
        run(actions, context: context)
    }

    // MARK: The channel's events

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): run(machine.receivedHead(head), context: context)
        case .body(let buffer): run(machine.receivedBody(buffer), context: context)
        case .end: run(machine.receivedEnd(), context: context)
        }
    }

    package func channelReadComplete(context: ChannelHandlerContext) {
        // A streamed body's bytes of this read go to its reader as one piece, before the read's
        // end is settled (a reader behind holds the next read).
        if call?.readComplete() == false { machine.readerFellBehind() }
        run(machine.readComplete(active: context.channel.isActive), context: context)
        context.fireChannelReadComplete()
    }

    package func read(context: ChannelHandlerContext) {
        run(machine.read(), context: context)
    }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        run(machine.errorCaught(error), context: context)
    }

    package func channelInactive(context: ChannelHandlerContext) {
        run(machine.closed(), context: context)
        context.fireChannelInactive()
    }

    // MARK: The call's events

    /// The reader of `call`'s streamed body caught up: a held read goes on.
    func readerCaughtUp(_ call: HTTP1Call) {
        guard self.call === call, let context else { return }
        run(machine.readerCaughtUp(), context: context)
    }

    /// `call`'s upload wrote the request's end.
    func uploadFinished(_ call: HTTP1Call) {
        guard self.call === call, let context else { return }
        run(machine.uploadFinished(), context: context)
    }

    /// `call`'s upload failed.
    func uploadFailed(_ call: HTTP1Call, with error: any Error) {
        guard self.call === call, let context else { return }
        run(machine.uploadFailed(error), context: context)
    }

    /// Ends `call` (cancelled, or its body dropped) and closes the connection.
    func abandon(_ call: HTTP1Call, with error: any Error) {
        guard self.call === call, let context else {
            call.fail(error)
            return
        }
        run(machine.cancel(error), context: context)
    }

    // MARK: Carrying out

    private func run(_ actions: HTTP1StateMachine.Actions, context: ChannelHandlerContext) {
        for action in actions {
            switch action {
            case .writeRequest(let ends):
                guard let call else { continue }
                // A head the encoder refuses (the core validates headers first, so never
                // expected) fails the call rather than leave it waiting for an answer.
                let written = context.eventLoop.makePromise(of: Void.self)
                written.futureResult.assumeIsolated().whenFailure { [weak self] error in self?.abandon(call, with: error) }
                context.write(wrapOutboundOut(.head(call.head)), promise: written)
                guard ends else {
                    context.flush()
                    continue
                }
                if let body = call.bodyInHand, body.readableBytes > 0 { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                call.requestSent()
            case .startUpload:
                call?.startUpload()
            case .read:
                context.read()
            case .deliverHead(let head):
                call?.receivedHead(head)
            case .deliverBody(let buffer):
                call?.receivedBody(buffer)
            case .release(let reusable):
                let onIdle = self.onIdle
                self.onIdle = nil
                onIdle?(reusable)
            case .deliverEnd:
                let call = self.call
                self.call = nil
                call?.receivedEnd()
            case .failCall(let error):
                let call = self.call
                self.call = nil
                call?.fail(error)
            case .handOver(let head):
                // No protocol of Courier's takes a connection over yet (the core refuses a
                // request that asks to switch): the answer goes as any, the connection closes.
                let call = self.call
                self.call = nil
                call?.receivedHead(head)
                call?.receivedEnd()
                context.close(promise: nil)
            case .close:
                context.close(promise: nil)
            }
        }
    }
}
