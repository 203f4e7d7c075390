import CourierCore
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
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
    /// TLS to an `https` proxy: the transport's trust, HTTP/1.1 only.
    let proxyTLS: TLSContextCache
    let pins: Set<TLSOptions.PublicKeyPin>
    let connectTimeout: TimeAmount
    let proxies: NIOTransport.Proxies
    /// Origins reached over a Unix domain socket or in h2c.
    let routes: [Origin: NIOTransport.Route]
    let resolver: NIOTransport.Resolver

    func connect(to origin: Origin, timings: HopTimings.Recorder? = nil) -> EventLoopFuture<PooledConnection> {
        let speaksHTTP2 = routes[origin]?.speaksHTTP2 == true
        let forwarding = forwardingProxy(for: origin)
        return open(origin, timings: timings, http1Only: false).flatMapThrowing { channel, negotiated -> PooledConnection in
            if negotiated == "h2" || (negotiated == nil && speaksHTTP2 && !origin.isSecure) {
                return .http2(try HTTP2Connection.configure(channel, origin: origin))
            }
            return .http1(try HTTP1Connection.configure(channel, origin: origin, forwardingProxy: origin.isSecure ? nil : forwarding))
        }
    }

    /// A connection of its own for a hop that switches protocols (a WebSocket's handshake): the
    /// same route, proxies, TLS and pins as a pooled one, HTTP/1.1 only (ALPN offers nothing
    /// else), through a proxy always by a tunnel (`CONNECT`, or SOCKS5), and no HTTP handlers
    /// yet: the caller adds its own. Never pooled.
    func connectForUpgrade(to origin: Origin, timings: HopTimings.Recorder?) -> EventLoopFuture<any Channel> {
        if routes[origin]?.speaksHTTP2 == true, !origin.isSecure {
            let failure = CourierError(.transport(TransportFailure(
                .other, message: "the origin is routed as h2c (HTTP/2 only), which cannot switch a connection to WebSocket")))
            return group.any().makeFailedFuture(failure)
        }
        return open(origin, timings: timings, http1Only: true).map { channel, _ in channel }
    }

    /// The HTTP proxy an `http` origin's requests go to (absolute URL on the request line), if any.
    private func forwardingProxy(for origin: Origin) -> NIOTransport.Proxy? {
        let route = routes[origin]
        let proxy = route?.unixSocketPath == nil ? proxies.proxy(for: origin) : nil
        return proxy.flatMap { $0.kind != .socks5 && !origin.isSecure && route?.speaksHTTP2 != true ? $0 : nil }
    }

    /// A channel to `origin`, through its proxy, with TLS done for `https` (the negotiated ALPN
    /// protocol with it): what every connection starts as.
    private func open(_ origin: Origin, timings: HopTimings.Recorder?, http1Only: Bool) -> EventLoopFuture<(any Channel, String?)> {
        var context: NIOSSLContext?
        if origin.isSecure {
            do {
                context = try http1Only ? proxyTLS.context() : tls.context()
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
        // A connection that switches protocols is always tunnelled, as browsers do for ws://.
        let forwarding = http1Only ? nil : proxy.flatMap { $0.kind != .socks5 && !origin.isSecure && !speaksHTTP2 ? $0 : nil }
        // An https proxy is spoken to over TLS of its own (HTTP/1.1 by ALPN: CONNECT and
        // forwarded requests are HTTP/1.1), checked as a server is, without the origin's pins.
        var proxyContext: NIOSSLContext?
        if proxy?.kind == .https {
            do {
                proxyContext = try proxyTLS.context()
            } catch {
                return group.any().makeFailedFuture(error)
            }
        }
        let tunnel = forwarding == nil ? proxy : nil
        let timeout = connectTimeout
        // The tunnel's outcome, kept as the channel is made: it may be decided (and its handler
        // gone) before the connect future's callbacks run.
        let opened = NIOLockedValueBox<EventLoopFuture<Void>?>(nil)
        // One loop for the channel and the resolver's answers: the caller's, when it runs on
        // one of the group's (``EventLoopTaskExecutor``), else the next.
        let loop = group.any()
        let bootstrap = ClientBootstrap(group: loop)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connectTimeout(connectTimeout)
            .channelInitializer { [proxyContext] channel in
                channel.eventLoop.makeCompletedFuture {
                    guard let proxy else { return }
                    let pipeline = channel.pipeline.syncOperations
                    var proxyHandshake: EventLoopFuture<Void>?
                    if let proxyContext {
                        let chain = VerifiedChain()
                        let gate = HandshakeGate(eventLoop: channel.eventLoop, pins: [], chain: chain, timeout: timeout, names: .proxy)
                        proxyHandshake = gate.verdict.futureResult.map { _ in }
                        do {
                            try pipeline.addHandler(
                                chain.clientHandler(context: proxyContext, serverHostname: Origin.isIPAddress(proxy.host) ? nil : proxy.host))
                            try pipeline.addHandler(gate)
                        } catch {
                            // A gate that never joined the pipeline (the channel closed first) still
                            // answers: its verdict is never left pending.
                            gate.verdict.fail(error)
                            throw error
                        }
                    }
                    guard let tunnel else {
                        // Forwarded requests wait for the proxy's handshake as a tunnel would.
                        if let proxyHandshake { opened.withLockedValue { $0 = proxyHandshake } }
                        return
                    }
                    switch tunnel.kind {
                    case .http, .https:
                        let handler = TunnelHandler(target: origin, authorization: tunnel.authorization, eventLoop: channel.eventLoop)
                        // A failed proxy handshake is the tunnel's failure, said as the proxy's.
                        let tunnelled = handler.established.futureResult
                        let established = (proxyHandshake ?? channel.eventLoop.makeSucceededVoidFuture()).flatMap { tunnelled }
                        opened.withLockedValue { $0 = established }
                        try pipeline.addHandler(handler)
                    case .socks5:
                        let handler = SOCKS5Handler(
                            target: SOCKS5Handshake.Target(host: origin.host, port: origin.port), credentials: tunnel.credentials,
                            eventLoop: channel.eventLoop)
                        opened.withLockedValue { $0 = handler.established.futureResult }
                        try pipeline.addHandler(handler)
                    }
                }
            }
        let host = proxy?.host ?? origin.host
        let port = proxy?.port ?? origin.port
        let pins = self.pins
        // Begun again when a name lookup ends (TimedResolver): connecting starts then.
        timings?.begin(.connect)
        let connected: EventLoopFuture<any Channel>
        if let path = route?.unixSocketPath {
            connected = bootstrap.connect(unixDomainSocketPath: path)
        } else {
            connected = bootstrap.resolver(TimedResolver(loop: loop, resolver: resolver, timings: timings)).connect(host: host, port: port)
        }
        return connected.flatMap { [context] channel in
            (opened.withLockedValue { $0 } ?? channel.eventLoop.makeSucceededVoidFuture()).flatMap { () -> EventLoopFuture<(any Channel, String?)> in
                if let timings {
                    timings.end(.connect)
                    timings.connection(nil, remoteAddress: channel.remoteAddress.map(Self.describe))
                }
                guard let context else { return channel.eventLoop.makeSucceededFuture((channel, nil)) }
                let handshake: EventLoopFuture<String?>
                // The chain BoringSSL verifies is recorded for the gate: the keys a pin is checked
                // against, and why a certificate was refused.
                let chain = VerifiedChain()
                let gate = HandshakeGate(eventLoop: channel.eventLoop, pins: pins, chain: chain, timeout: timeout)
                do {
                    let pipeline = channel.pipeline.syncOperations
                    handshake = gate.verdict.futureResult
                    try pipeline.addHandler(gate)
                    timings?.begin(.tls)
                    let serverName = origin.isIPAddress ? nil : origin.host
                    let handler =
                        try chain.clientHandler(context: context, serverHostname: serverName)
                    try pipeline.addHandler(handler, position: .before(gate))
                } catch {
                    // The channel closed before the handshake could be set up: the gate's verdict
                    // is settled, never left pending.
                    gate.verdict.fail(error)
                    return channel.eventLoop.makeFailedFuture(error)
                }
                return handshake.map { negotiated -> (any Channel, String?) in
                    timings?.end(.tls)
                    return (channel, negotiated)
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
