import CourierCore
import NIOCore
import NIOSSL
import NIOTLS

/// Holds a new TLS connection back until its handshake is over and a key of the chain the TLS
/// library verified (the server's, an intermediate's or the root's) is one of the pinned keys
/// (when there are any): the connection is lent to a hop only then, so no byte of
/// a request is ever sent to a server that failed either. Removes itself once it has decided.
final class HandshakeGate: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    /// Whose handshake it is: the server's, or an `https` proxy's (whose failures say so).
    enum Peer {
        case server
        case proxy
    }

    /// Succeeds with the protocol agreed by ALPN (`nil` when none was), or fails with the reason.
    let verdict: EventLoopPromise<String?>
    private let pins: Set<TLSOptions.PublicKeyPin>
    /// The keys of the chain the TLS library verified, when pins are checked.
    private let chain: VerifiedChain?
    private let timeout: TimeAmount
    private let peer: Peer
    private var timer: Scheduled<Void>?

    init(eventLoop: any EventLoop, pins: Set<TLSOptions.PublicKeyPin>, chain: VerifiedChain? = nil, timeout: TimeAmount, names peer: Peer = .server) {
        self.verdict = eventLoop.makePromise()
        self.pins = pins
        self.chain = chain
        self.timeout = timeout
        self.peer = peer
    }

    /// Fails the wait with `error`, said as the proxy's when it is one.
    private func fail(_ error: any Error) {
        verdict.fail(peer == .proxy ? NIOTransportError.proxyTLS(error) : error)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        // A server that accepts the connection and never answers the handshake gives up its place.
        let verdict = self.verdict
        let channel = context.channel
        let peer = self.peer
        let timeout = self.timeout
        timer = context.eventLoop.scheduleTask(in: timeout) {
            let timedOut = NIOTransportError.handshakeTimedOut(limit: timeout)
            verdict.fail(peer == .proxy ? NIOTransportError.proxyTLS(timedOut) : timedOut)
            channel.close(promise: nil)
        }
    }

    /// Removed before deciding (the channel closed, or never became active): the wait fails.
    /// Failing a promise twice is harmless here: only the first outcome counts.
    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        fail(NIOTransportError.connectionClosedBeforeResponse)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted(let negotiated) = event {
            timer?.cancel()
            if pins.isEmpty || serverKeyIsPinned(context: context) {
                verdict.succeed(negotiated)
                context.fireUserInboundEventTriggered(event)
                context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
                return
            }
            verdict.fail(NIOTransportError.pinMismatch)
            context.close(promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        timer?.cancel()
        // A certificate BoringSSL refused: which way it failed, read from the certificate.
        if let refusal = chain?.refusal, Self.isVerificationFailure(error) {
            fail(NIOTransportError.certificateRefused(refusal, error))
        } else {
            fail(error)
        }
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        fail(NIOTransportError.connectionClosedBeforeResponse)
        context.fireChannelInactive()
    }

    /// Whether `error` is BoringSSL's verdict on the peer's chain (`CERTIFICATE_VERIFY_FAILED`).
    private static func isVerificationFailure(_ error: any Error) -> Bool {
        guard case .handshakeFailed(let reason)? = error as? NIOSSLError else { return false }
        return "\(reason)".contains("CERTIFICATE_VERIFY_FAILED")
    }

    /// Whether a key of the verified chain (the server's, an intermediate's, the trust anchor's)
    /// is pinned; the server's own key when no chain was seen (a resumed session is not verified
    /// again).
    private func serverKeyIsPinned(context: ChannelHandlerContext) -> Bool {
        var keys = chain?.keys ?? []
        if keys.isEmpty,
            let handler = try? context.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self),
            let certificate = handler.peerCertificate,
            let key = try? certificate.extractPublicKey().toSPKIBytes()
        {
            keys = [key]
        }
        return keys.contains { key in pins.contains { $0.matches(subjectPublicKeyInfo: key) } }
    }
}
