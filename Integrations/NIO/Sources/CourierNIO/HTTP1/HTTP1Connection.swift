import CourierCore
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// One HTTP/1.1 connection to one origin: a channel whose pipeline ends in an ``HTTP1Handler``.
/// The pool lends it to one hop at a time.
final class HTTP1Connection: Sendable {
    let channel: any Channel
    let handler: NIOLoopBound<HTTP1Handler>
    let origin: Origin

    private init(channel: any Channel, handler: NIOLoopBound<HTTP1Handler>, origin: Origin) {
        self.channel = channel
        self.handler = handler
        self.origin = origin
    }

    /// Whether the connection may be lent again: open, as far as this thread can tell.
    var isOpen: Bool { channel.isActive }

    /// Closes the connection (a call in flight fails).
    func close() {
        channel.close(promise: nil)
    }

    /// Opens a connection to `origin`: TCP, then for `https` TLS over it (the handshake finished
    /// and the server's key checked against `pins` before the connection is handed over), then
    /// HTTP/1.1.
    static func connect(
        to origin: Origin, group: any EventLoopGroup, tls: NIOSSLContext?, pins: Set<TLSOptions.PublicKeyPin>, connectTimeout: TimeAmount
    ) -> EventLoopFuture<HTTP1Connection> {
        let serverName = origin.isIPAddress ? nil : origin.host
        let bootstrap = ClientBootstrap(group: group)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connectTimeout(connectTimeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if origin.isSecure {
                        guard let tls else { throw NIOTransportError.noTLSContext }
                        try pipeline.addHandler(NIOSSLClientHandler(context: tls, serverHostname: serverName))
                        try pipeline.addHandler(HandshakeGate(eventLoop: channel.eventLoop, pins: pins, timeout: connectTimeout))
                    }
                    try pipeline.addHandler(HTTPRequestEncoder())
                    try pipeline.addHandler(
                        ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .dropBytes, informationalResponseStrategy: .drop)))
                    try pipeline.addHandler(HTTP1Handler())
                }
            }
        return bootstrap.connect(host: origin.host, port: origin.port).flatMap { channel in
            let made = channel.eventLoop.makeCompletedFuture {
                let handler = try channel.pipeline.syncOperations.handler(type: HTTP1Handler.self)
                return HTTP1Connection(channel: channel, handler: NIOLoopBound(handler, eventLoop: channel.eventLoop), origin: origin)
            }
            guard origin.isSecure else { return made }
            let gate: HandshakeGate
            do {
                gate = try channel.pipeline.syncOperations.handler(type: HandshakeGate.self)
            } catch {
                // The handshake already failed and the channel closed: its handlers are gone.
                channel.close(promise: nil)
                return channel.eventLoop.makeFailedFuture(error)
            }
            return gate.verdict.futureResult.flatMap { _ in made }.flatMapErrorThrowing { error in
                channel.close(promise: nil)
                throw error
            }
        }
    }
}
