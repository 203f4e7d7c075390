import CourierCore
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTP2

/// One HTTP/2 connection to one origin: hops run on it at once, each as a stream whose pipeline
/// turns HTTP/2 frames into the HTTP/1-style parts an ``HTTP1Handler`` reads, so one set of
/// rules reads every response. It decides nothing: what the server says of the connection (its
/// `SETTINGS_MAX_CONCURRENT_STREAMS`, a `GOAWAY`) and each stream's end go to the pool
/// (``PoolStateMachine``), which counts streams and closes the connection.
final class HTTP2Connection: Sendable {
    /// What the connection tells its pool.
    enum Event: Sendable {
        /// The server allows this many streams at once.
        case maximumStreams(Int)
        /// The server sent `GOAWAY`.
        case goAway
        /// A stream ended (or could not be opened).
        case streamClosed
    }

    let channel: any Channel
    let origin: Origin
    private let multiplexer: NIOLoopBound<NIOHTTP2Handler.StreamMultiplexer>

    private struct Reports {
        /// Where events go, once the pool has adopted the connection.
        var listener: (@Sendable (Event) -> Void)?
        /// What the server said before then.
        var maximumStreams: Int?
        var goAway = false
        /// The last stream a `GOAWAY` said the server processed (or may process).
        var lastProcessedStream: HTTP2StreamID?
    }

    private let reports = NIOLockedValueBox(Reports())

    private init(channel: any Channel, origin: Origin, multiplexer: NIOLoopBound<NIOHTTP2Handler.StreamMultiplexer>) {
        self.channel = channel
        self.origin = origin
        self.multiplexer = multiplexer
    }

    /// The HTTP/2 handlers added to `channel` (after TLS), and the connection over them. Runs on
    /// the channel's event loop.
    static func configure(_ channel: any Channel, origin: Origin) throws -> HTTP2Connection {
        let pipeline = channel.pipeline.syncOperations
        let multiplexer = try pipeline.configureHTTP2Pipeline(
            mode: .client, connectionConfiguration: .init(), streamConfiguration: .init()
        ) { stream in
            // A server push or any stream the server opens: refused (Courier sends
            // SETTINGS_ENABLE_PUSH 0; a stream anyway is closed).
            stream.close()
        }
        let connection = HTTP2Connection(channel: channel, origin: origin, multiplexer: NIOLoopBound(multiplexer, eventLoop: channel.eventLoop))
        try pipeline.addHandler(ConnectionFrameWatcher(connection: connection))
        return connection
    }

    /// Sends every event from now on to `listener`, after what the server said before: the
    /// most streams it allows (`nil` if it has not said) is returned, and a `GOAWAY` that came
    /// already is reported at once.
    func listen(_ listener: @escaping @Sendable (Event) -> Void) -> Int? {
        let (most, goAway) = reports.withLockedValue { reports in
            reports.listener = listener
            return (reports.maximumStreams, reports.goAway)
        }
        if goAway { listener(.goAway) }
        return most
    }

    /// Whether the stream `id` was left out by a `GOAWAY`: the server did not process it.
    func wasLeftOut(_ id: HTTP2StreamID) -> Bool {
        reports.withLockedValue { reports in reports.lastProcessedStream.map { id > $0 } ?? false }
    }

    fileprivate func goAway(lastProcessed: HTTP2StreamID) {
        reports.withLockedValue { reports in
            reports.lastProcessedStream = min(reports.lastProcessedStream ?? lastProcessed, lastProcessed)
        }
        report(.goAway)
    }

    fileprivate func report(_ event: Event) {
        let listener = reports.withLockedValue { reports -> (@Sendable (Event) -> Void)? in
            switch event {
            case .maximumStreams(let most): reports.maximumStreams = most
            case .goAway: reports.goAway = true
            case .streamClosed: break
            }
            return reports.listener
        }
        listener?(event)
    }

    /// Opens a stream for one hop: its channel, and the handler a call runs on. Its end (or a
    /// failure to open it) is reported.
    func openStream() -> EventLoopFuture<(any Channel, NIOLoopBound<HTTP1Handler>)> {
        let loop = channel.eventLoop
        let multiplexer = self.multiplexer
        let secure = origin.isSecure
        let opened = loop.flatSubmit {
            multiplexer.value.createStreamChannel { stream in
                stream.eventLoop.makeCompletedFuture {
                    let pipeline = stream.pipeline.syncOperations
                    try pipeline.addHandler(StatusGuard())
                    try pipeline.addHandler(HTTP2FramePayloadToHTTP1ClientCodec(httpProtocol: secure ? .https : .http))
                    try pipeline.addHandler(HTTP1Handler(isStream: true))
                }
            }
        }.flatMapThrowing { stream -> (any Channel, NIOLoopBound<HTTP1Handler>) in
            let handler = try stream.pipeline.syncOperations.handler(type: HTTP1Handler.self)
            stream.closeFuture.whenComplete { _ in self.report(.streamClosed) }
            return (stream, NIOLoopBound(handler, eventLoop: stream.eventLoop))
        }
        opened.whenFailure { _ in self.report(.streamClosed) }
        return opened
    }
}

/// Reads the connection's own frames: the server's settings and its `GOAWAY`.
private final class ConnectionFrameWatcher: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame

    let connection: HTTP2Connection

    init(connection: HTTP2Connection) { self.connection = connection }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data).payload {
        case .goAway(let lastStreamID, _, _):
            connection.goAway(lastProcessed: lastStreamID)
        case .settings(.settings(let settings)):
            if let most = settings.last(where: { $0.parameter == .maxConcurrentStreams }) { connection.report(.maximumStreams(most.value)) }
        default:
            break
        }
        context.fireChannelRead(data)
    }
}
