import CourierCore
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTP2

/// One HTTP/2 connection to one origin: hops run on it at once, each as a stream whose pipeline
/// turns HTTP/2 frames into the HTTP/1-style parts an ``HTTP1Handler`` reads, so one set of
/// rules reads every response. A `GOAWAY` from the server stops new streams on it (those under
/// way finish); it closes once idle for the pool's idle timeout.
final class HTTP2Connection: Sendable {
    /// What the transport's configuration says about HTTP/2.
    struct Settings: Sendable {
        var idleTimeout: TimeAmount
    }

    let channel: any Channel
    let origin: Origin
    private let multiplexer: NIOLoopBound<NIOHTTP2Handler.StreamMultiplexer>
    private let settings: Settings

    private struct State {
        var open = 0
        var draining = false
        /// Which idle spell this is, so that a timer of an earlier spell closes nothing.
        var spell: UInt64 = 0
    }

    private let state = NIOLockedValueBox(State())

    private init(channel: any Channel, origin: Origin, multiplexer: NIOLoopBound<NIOHTTP2Handler.StreamMultiplexer>, settings: Settings) {
        self.channel = channel
        self.origin = origin
        self.multiplexer = multiplexer
        self.settings = settings
    }

    /// Whether new streams may start on it: open, and no `GOAWAY` received.
    var isUsable: Bool { channel.isActive && !state.withLockedValue(\.draining) }

    /// The HTTP/2 handlers added to `channel` (after TLS), and the connection over them. Runs on
    /// the channel's event loop.
    static func configure(_ channel: any Channel, origin: Origin, settings: Settings) throws -> HTTP2Connection {
        let pipeline = channel.pipeline.syncOperations
        let multiplexer = try pipeline.configureHTTP2Pipeline(
            mode: .client, connectionConfiguration: .init(), streamConfiguration: .init()
        ) { stream in
            // A server push or any stream the server opens: refused (Courier sends
            // SETTINGS_ENABLE_PUSH 0; a stream anyway is closed).
            stream.close()
        }
        let connection = HTTP2Connection(
            channel: channel, origin: origin, multiplexer: NIOLoopBound(multiplexer, eventLoop: channel.eventLoop), settings: settings)
        try pipeline.addHandler(GoAwayWatcher(connection: connection))
        connection.streamEnded(started: false)
        return connection
    }

    /// Opens a stream for one hop: its channel, and the handler a call runs on.
    func openStream() -> EventLoopFuture<(any Channel, NIOLoopBound<HTTP1Handler>)> {
        state.withLockedValue {
            $0.open += 1
            $0.spell += 1
        }
        let loop = channel.eventLoop
        let multiplexer = self.multiplexer
        let opened = loop.flatSubmit {
            multiplexer.value.createStreamChannel { stream in
                stream.eventLoop.makeCompletedFuture {
                    let pipeline = stream.pipeline.syncOperations
                    try pipeline.addHandler(StatusGuard())
                    try pipeline.addHandler(HTTP2FramePayloadToHTTP1ClientCodec(httpProtocol: .https))
                    try pipeline.addHandler(HTTP1Handler())
                }
            }
        }.flatMapThrowing { stream -> (any Channel, NIOLoopBound<HTTP1Handler>) in
            let handler = try stream.pipeline.syncOperations.handler(type: HTTP1Handler.self)
            stream.closeFuture.whenComplete { _ in self.streamEnded(started: true) }
            return (stream, NIOLoopBound(handler, eventLoop: stream.eventLoop))
        }
        opened.whenFailure { _ in self.streamEnded(started: true) }
        return opened
    }

    /// A stream ended (or the connection is new): once none is open, the connection closes after
    /// the idle timeout unless a stream starts meanwhile.
    private func streamEnded(started: Bool) {
        let spell = state.withLockedValue { state -> UInt64? in
            if started { state.open -= 1 }
            guard state.open == 0 else { return nil }
            state.spell += 1
            return state.spell
        }
        guard let spell else { return }
        let channel = self.channel
        channel.eventLoop.scheduleTask(in: settings.idleTimeout) {
            let idle = self.state.withLockedValue { $0.open == 0 && $0.spell == spell }
            if idle { channel.close(promise: nil) }
        }
    }

    /// The server sent `GOAWAY`: no new stream starts here.
    fileprivate func goAwayReceived() {
        let idle = state.withLockedValue { state -> Bool in
            state.draining = true
            return state.open == 0
        }
        if idle { channel.close(promise: nil) }
    }

    func close() { channel.close(promise: nil) }
}

/// Watches the connection's own frames for a `GOAWAY`.
private final class GoAwayWatcher: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame

    let connection: HTTP2Connection

    init(connection: HTTP2Connection) { self.connection = connection }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .goAway = unwrapInboundIn(data).payload { connection.goAwayReceived() }
        context.fireChannelRead(data)
    }
}
