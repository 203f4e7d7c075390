import CourierCore
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSOCKS
import NIOSSL

/// A connection the pool keeps: HTTP/1.1 (one hop at a time) or HTTP/2 (hops multiplexed as
/// streams), as the server agreed by ALPN.
enum PooledConnection: Sendable {
    case http1(HTTP1Connection)
    case http2(HTTP2Connection)

    var channel: any Channel {
        switch self {
        case .http1(let connection): connection.channel
        case .http2(let connection): connection.channel
        }
    }
}

/// Opens connections: TCP (to the origin, or to its proxy and through it: an HTTP `CONNECT`
/// tunnel or SOCKS5), then for `https` TLS (the handshake finished and the server's key checked
/// against the pins before the connection is handed over), then HTTP/2 when the server chose it
/// by ALPN, HTTP/1.1 otherwise. The hop that opens it records each phase: DNS (by
/// ``TimedResolver``), connect (TCP and a proxy's tunnel), TLS.
struct Connector: Sendable {
    let group: any EventLoopGroup
    let tls: TLSContextCache
    let pins: Set<TLSOptions.PublicKeyPin>
    let connectTimeout: TimeAmount
    let proxies: NIOTransport.Proxies
    /// Origins reached over a Unix domain socket or in h2c.
    let routes: [Origin: NIOTransport.Route]
    let resolver: NIOTransport.Resolver

    func connect(to origin: Origin, timings: HopTimings.Recorder? = nil) -> EventLoopFuture<PooledConnection> {
        var context: NIOSSLContext?
        if origin.isSecure {
            do {
                context = try tls.context()
            } catch {
                return group.any().makeFailedFuture(error)
            }
        }
        let route = routes[origin]
        // A socket of its own: no proxy.
        let proxy = route?.unixSocketPath == nil ? proxies.proxy(for: origin) : nil
        let speaksHTTP2 = route?.speaksHTTP2 == true
        // An http origin through an HTTP proxy: requests go to the proxy, absolute URL on the
        // request line (HTTP/1.1 only: an h2c origin is tunnelled). Anything else through a
        // proxy is tunnelled.
        let forwarding = proxy.flatMap { $0.kind == .http && !origin.isSecure && !speaksHTTP2 ? $0 : nil }
        let tunnel = forwarding == nil ? proxy : nil
        // The tunnel's outcome, kept as the channel is made: it may be decided (and its handler
        // gone) before the connect future's callbacks run.
        let opened = NIOLockedValueBox<EventLoopFuture<Void>?>(nil)
        // One loop for the channel and the resolver's answers.
        let loop = group.next()
        let bootstrap = ClientBootstrap(group: loop)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connectTimeout(connectTimeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    guard let tunnel else { return }
                    let pipeline = channel.pipeline.syncOperations
                    switch tunnel.kind {
                    case .http:
                        let handler = TunnelHandler(target: origin, authorization: tunnel.authorization, eventLoop: channel.eventLoop)
                        opened.withLockedValue { $0 = handler.established.futureResult }
                        try pipeline.addHandler(handler)
                    case .socks5:
                        let target: SOCKSAddress =
                            if let address = try? SocketAddress(ipAddress: origin.host, port: origin.port) {
                                .address(address)
                            } else {
                                .domain(origin.host, port: origin.port)
                            }
                        let gate = SOCKSGate(eventLoop: channel.eventLoop)
                        opened.withLockedValue { $0 = gate.established.futureResult }
                        try pipeline.addHandler(SOCKSClientHandler(targetAddress: target))
                        try pipeline.addHandler(gate)
                    }
                }
            }
        let host = proxy?.host ?? origin.host
        let port = proxy?.port ?? origin.port
        let pins = self.pins
        let timeout = connectTimeout
        // Begun again when a name lookup ends (TimedResolver): connecting starts then.
        timings?.begin(.connect)
        let connected: EventLoopFuture<any Channel>
        if let path = route?.unixSocketPath {
            connected = bootstrap.connect(unixDomainSocketPath: path)
        } else {
            connected = bootstrap.resolver(TimedResolver(loop: loop, resolver: resolver, timings: timings)).connect(host: host, port: port)
        }
        return connected.flatMap { [context] channel in
            (opened.withLockedValue { $0 } ?? channel.eventLoop.makeSucceededVoidFuture()).flatMap { () -> EventLoopFuture<PooledConnection> in
                if let timings {
                    timings.end(.connect)
                    timings.connection(nil, remoteAddress: channel.remoteAddress.map(Self.describe))
                }
                guard let context else {
                    return channel.eventLoop.makeCompletedFuture {
                        if speaksHTTP2 { return .http2(try HTTP2Connection.configure(channel, origin: origin)) }
                        return .http1(try HTTP1Connection.configure(channel, origin: origin, forwardingProxy: forwarding))
                    }
                }
                let handshake: EventLoopFuture<String?>
                do {
                    let pipeline = channel.pipeline.syncOperations
                    let gate = HandshakeGate(eventLoop: channel.eventLoop, pins: pins, timeout: timeout)
                    handshake = gate.verdict.futureResult
                    try pipeline.addHandler(gate)
                    timings?.begin(.tls)
                    try pipeline.addHandler(
                        NIOSSLClientHandler(context: context, serverHostname: origin.isIPAddress ? nil : origin.host), position: .before(gate))
                } catch {
                    return channel.eventLoop.makeFailedFuture(error)
                }
                return handshake.flatMapThrowing { negotiated -> PooledConnection in
                    timings?.end(.tls)
                    if negotiated == "h2" { return .http2(try HTTP2Connection.configure(channel, origin: origin)) }
                    return .http1(try HTTP1Connection.configure(channel, origin: origin, forwardingProxy: nil))
                }
            }.flatMapErrorThrowing { error in
                channel.close(promise: nil)
                throw error
            }
        }
    }
}

extension Connector {
    /// `127.0.0.1:8080`, `[::1]:443`: an address as ``HopTimings/remoteAddress`` shows it.
    static func describe(_ address: SocketAddress) -> String {
        guard let ip = address.ipAddress else { return "\(address)" }
        let host = address.protocol == .inet6 ? "[\(ip)]" : ip
        return address.port.map { "\(host):\($0)" } ?? host
    }
}

/// Succeeds when the SOCKS5 proxy says the connection to the target is made.
final class SOCKSGate: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    let established: EventLoopPromise<Void>
    private var done = false

    init(eventLoop: any EventLoop) { established = eventLoop.makePromise() }

    /// A channel that never connected (or went before the proxy answered) fails the wait.
    func handlerRemoved(context: ChannelHandlerContext) {
        guard !done else { return }
        done = true
        established.fail(CourierError(.transport(TransportFailure(.cannotConnect, message: "the connection to the proxy was not made"))))
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is SOCKSProxyEstablishedEvent, !done {
            done = true
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            established.succeed(())
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !done {
            done = true
            established.fail(error)
            context.close(promise: nil)
        }
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !done {
            done = true
            established.fail(
                CourierError(.transport(TransportFailure(.cannotConnect, message: "the SOCKS proxy closed the connection before it was made"))))
        }
        context.fireChannelInactive()
    }
}
