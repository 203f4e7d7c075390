import CourierCore
import NIOCore
import NIOHTTP1

/// The last handler of an HTTP/1.1 connection's pipeline, or of an HTTP/2 stream's (after the
/// codec that turns frames into HTTP/1-style parts): it runs one request at a time (no
/// pipelining), hands the response to the waiting ``HTTP1Call``, holds reads back while a streamed
/// body's reader is behind, and tells its ``HTTP1Connection`` when the connection is free again
/// or can never be used again.
///
/// Everything here runs on the channel's event loop.
final class HTTP1Handler: ChannelDuplexHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    /// The request in flight, if any.
    private var call: HTTP1Call?
    /// A `read` held back while the reader of a streamed body is behind.
    private var readPending = false
    /// Whether the connection may carry another request once this one is done.
    private var closing = false
    /// What closed the connection while no request was in flight.
    private var failure: (any Error)?
    /// The call whose answer ended in the read under way, settled when the read is over.
    private var ended: HTTP1Call?
    private var context: ChannelHandlerContext?
    /// Told once the connection is idle again (`true`) or must not be reused (`false`).
    var onIdle: ((_ reusable: Bool) -> Void)?
    /// The informational heads before the answer of the call in flight.
    private var informational = InformationalHeads()

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    /// Starts `call`: writes its head (and its body when it is in hand).
    func start(_ call: HTTP1Call) {
        guard let context, self.call == nil, !closing, context.channel.isActive else {
            call.fail(failure ?? NIOTransportError.connectionClosedBeforeResponse)
            return
        }
        self.call = call
        informational = InformationalHeads()
        call.connectionStarted(context: context, handler: self)
        // A head the encoder refuses (the core validates headers first, so never expected) fails
        // the call rather than leave it waiting for an answer.
        let written = context.eventLoop.makePromise(of: Void.self)
        written.futureResult.assumeIsolated().whenFailure { [weak self] error in self?.abandon(call, with: error) }
        context.write(wrapOutboundOut(.head(call.head)), promise: written)
        if let body = call.bodyInHand {
            if body.readableBytes > 0 { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            call.requestSent()
        } else if call.streamsBody {
            context.flush()
            call.startUpload()
        } else {
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            call.requestSent()
        }
        // A connection that was idle may have had its reads held by nothing: ask for bytes.
        context.read()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        guard let call else {
            // Bytes nobody asked for (a body longer than its framing said, a second response):
            // the connection cannot be trusted with another request. An answer that ended in
            // this same read is still given (below), on a connection that is not kept.
            closing = true
            if ended == nil { closeConnection(context: context) }
            return
        }
        switch part {
        case .head(let head):
            // An informational head is not the answer (RFC 9110 §15.2), and a bounded number of
            // them are skipped. A 101 is refused by the core.
            if (100..<200).contains(head.status.code), head.status.code != 101 {
                if let excess = informational.count(head) { fail(NIOTransportError.tooManyInformationalHeads(excess), context: context) }
                return
            }
            if !head.isKeepAlive || head.status.code < 200 { closing = true }
            call.receivedHead(head)
        case .body(let buffer):
            call.receivedBody(buffer)
        case .end:
            // Settled once this read is over: bytes after the end in the same read mean the
            // connection is not kept.
            self.call = nil
            ended = call
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        settle(context: context)
        context.fireChannelReadComplete()
    }

    /// Gives the call whose answer ended in the last read its end, and keeps the connection (back
    /// in the pool before the caller hears of the answer, so its next hop finds it idle) or
    /// closes it.
    private func settle(context: ChannelHandlerContext) {
        guard let call = ended else { return }
        ended = nil
        if !closing && call.isRequestComplete && context.channel.isActive {
            let onIdle = self.onIdle
            self.onIdle = nil
            onIdle?(true)
            call.receivedEnd()
        } else {
            call.receivedEnd()
            closeConnection(context: context)
        }
    }

    func read(context: ChannelHandlerContext) {
        if let call, call.isReaderBehind {
            readPending = true
            return
        }
        context.read()
    }

    /// The reader of a streamed body caught up: a held read goes on.
    func resumeReading() {
        guard readPending, let context else { return }
        readPending = false
        context.read()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(error, context: context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        closing = true
        // An answer that ended just before the close is whole.
        settle(context: context)
        if let call {
            self.call = nil
            call.connectionClosed()
        }
        if let onIdle {
            self.onIdle = nil
            onIdle(false)
        }
        context.fireChannelInactive()
    }

    /// Fails the call in flight with `error` and closes the connection. With none in flight, the
    /// error is kept for the call the connection was about to be lent to (a TLS 1.3 server refuses
    /// a client certificate only after the client's side of the handshake is over).
    func fail(_ error: any Error, context: ChannelHandlerContext) {
        closing = true
        if let call {
            self.call = nil
            call.fail(error)
        } else if ended != nil {
            // Bytes after an answer that had ended did not parse: the answer stands.
            settle(context: context)
        } else if failure == nil {
            failure = error
        }
        closeConnection(context: context)
    }

    /// Ends `call` (cancelled, its body dropped, its upload failed) and closes the connection.
    func abandon(_ call: HTTP1Call, with error: any Error) {
        guard self.call === call, let context else {
            call.fail(error)
            return
        }
        fail(error, context: context)
    }

    private func closeConnection(context: ChannelHandlerContext) {
        closing = true
        if let onIdle {
            self.onIdle = nil
            onIdle(false)
        }
        context.close(promise: nil)
    }
}
