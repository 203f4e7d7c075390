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

    /// How many bytes of one response the server may send before the reader takes them (each
    /// stream's flow-control window, advertised as `SETTINGS_INITIAL_WINDOW_SIZE`): 4 MiB. With
    /// HTTP/2's default of 64 KiB, one response could not move faster than 64 KiB a round trip
    /// (1.3 MB/s at 50 ms), and every 32 KiB of a body cost a `WINDOW_UPDATE`. It is also what a
    /// stream buffers, at most, while a streamed body's reader is behind.
    static let streamWindow = 4 << 20
    /// The same for all of a connection's streams together: 16 MiB.
    static let connectionWindow = 16 << 20

    /// The settings Courier's client sends: SwiftNIO's (at most 100 streams the server opens,
    /// header lists to 16 KiB), no server push, and the stream window above.
    static var initialSettings: HTTP2Settings {
        nioDefaultSettings + [
            HTTP2Setting(parameter: .enablePush, value: 0),
            HTTP2Setting(parameter: .initialWindowSize, value: streamWindow),
        ]
    }

    /// The HTTP/2 handlers added to `channel` (after TLS), and the connection over them. Runs on
    /// the channel's event loop.
    static func configure(_ channel: any Channel, origin: Origin) throws -> HTTP2Connection {
        let pipeline = channel.pipeline.syncOperations
        // Before the HTTP/2 handler: the streams' flushes of one turn of the loop go out as one.
        try pipeline.addHandler(FlushCoalescer())
        var connectionConfiguration = NIOHTTP2Handler.ConnectionConfiguration()
        connectionConfiguration.initialSettings = initialSettings
        connectionConfiguration.targetWindowSize = connectionWindow
        var streamConfiguration = NIOHTTP2Handler.StreamConfiguration()
        streamConfiguration.targetWindowSize = streamWindow
        let multiplexer = try pipeline.configureHTTP2Pipeline(
            mode: .client, connectionConfiguration: connectionConfiguration, streamConfiguration: streamConfiguration
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

    /// Opens a stream for `call` and starts the call on it, in one pass on the connection's event
    /// loop: the caller's task hands the hop to the loop once and waits for its answer (no
    /// round trip to the task between the stream and the request). A stream that cannot be
    /// opened fails the call. The stream's end (or a failure to open it) is reported.
    /// - Returns: The stream, for what a failure needs to know of it (its ID).
    func start(_ call: HTTP1Call) -> EventLoopFuture<any Channel> {
        let loop = channel.eventLoop
        let multiplexer = self.multiplexer
        let secure = origin.isSecure
        let opened = loop.makePromise(of: (any Channel).self)
        loop.execute {
            // SwiftNIO opens the stream in a task of its own, which runs before the loop waits
            // for I/O again: the request is written in this same turn of the loop.
            multiplexer.value.createStreamChannel(promise: opened) { stream in
                stream.eventLoop.makeCompletedFuture {
                    let pipeline = stream.pipeline.syncOperations
                    try pipeline.addHandler(StatusGuard())
                    try pipeline.addHandler(HTTP2FramePayloadToHTTP1ClientCodec(httpProtocol: secure ? .https : .http))
                    try pipeline.addHandler(HTTP1Handler(isStream: true))
                }
            }
            opened.futureResult.assumeIsolated().whenComplete { result in
                switch result {
                case .success(let stream):
                    stream.closeFuture.whenComplete { _ in self.report(.streamClosed) }
                    // Ended while the stream opened (cancelled, or its timer fired): nothing is sent.
                    guard !call.isFinished, let handler = try? stream.pipeline.syncOperations.handler(type: HTTP1Handler.self) else {
                        call.fail(CancellationError())
                        stream.close(promise: nil)
                        return
                    }
                    // A stream is used once: it closes with its response.
                    handler.onIdle = { _ in }
                    handler.start(call)
                case .failure(let error):
                    self.report(.streamClosed)
                    call.fail(error)
                }
            }
        }
        return opened.futureResult
    }
}

/// Reads the connection's own frames: the server's settings and its `GOAWAY`. Opens the
/// connection's window to ``HTTP2Connection/connectionWindow`` as the connection starts (SwiftNIO
/// raises it only once the first body arrives, so the first response on a connection would
/// still have had 64 KiB), and says `GOAWAY` (`NO_ERROR`, no stream of the server's taken)
/// before the pool closes the connection (RFC 9113 §6.8: an endpoint closing a connection
/// should), so the server reads a goodbye rather than a dropped connection. A connection
/// SwiftNIO's HTTP/2 handler closes for a protocol error gets that handler's own `GOAWAY`.
private final class ConnectionFrameWatcher: ChannelDuplexHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    let connection: HTTP2Connection
    private var windowOpened = false
    private var saidGoodbye = false

    init(connection: HTTP2Connection) { self.connection = connection }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { openWindow(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        // After the HTTP/2 handler's own: its preface and settings go first.
        openWindow(context: context)
        context.fireChannelActive()
    }

    private func openWindow(context: ChannelHandlerContext) {
        guard !windowOpened else { return }
        windowOpened = true
        let increment = HTTP2Connection.connectionWindow - 65_535
        context.writeAndFlush(wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: increment))), promise: nil)
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if mode == .all, !saidGoodbye, context.channel.isActive {
            saidGoodbye = true
            let goodbye = HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: .rootStream, errorCode: .noError, opaqueData: nil))
            context.writeAndFlush(wrapOutboundOut(goodbye), promise: nil)
        }
        context.close(mode: mode, promise: promise)
    }

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
