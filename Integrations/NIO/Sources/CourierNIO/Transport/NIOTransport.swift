@_spi(NIOTransports) import CourierNIOSupport
@_spi(Transports) import CourierCore
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import NIOConcurrencyHelpers
import NIOCore
import NIOFoundationEssentialsCompat
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL

/// Sends one hop over Courier's own connections on SwiftNIO (HTTP/1.1, and HTTP/2 by ALPN or, on
/// a ``Route``, with prior knowledge): the ``/Courier/Transport`` under ``NIOExecutor``.
///
/// It speaks HTTP itself (SwiftNIO's parser, Courier's decisions): it keeps a pool of
/// connections per origin, renders the request, reads every response head and body by Courier's
/// rules (a head that is not a final answer, or a body that breaks its framing, is a typed error
/// and the connection is closed, never a trap), inflates `gzip` and `deflate` bodies piece by
/// piece, and maps SwiftNIO's errors. Redirects, the size limit, timeouts and the framing check
/// are the ``/Courier/Exchange``'s, as on every transport.
///
/// A transport owns its connections: make one and share it (it is `Sendable`), and call
/// ``shutdown(gracePeriod:)`` when done with it, or use ``NIOExecutor/shared``.
public final class NIOTransport: Transport {
    /// How the transport connects and what it keeps.
    public let configuration: Configuration
    /// The event loops connections run on.
    public let eventLoopGroup: any EventLoopGroup
    private let pool: ConnectionPool
    /// Opens connections: the pool's, and those of hops that switch protocols (never pooled).
    let connector: Connector
    /// The connections hops switched to another protocol (WebSockets), open: ``shutdown(gracePeriod:)``
    /// closes them with the pool's.
    let switchedChannels = NIOLockedValueBox<[ObjectIdentifier: any Channel]>([:])

    /// Creates a transport.
    /// - Parameters:
    ///   - configuration: Pool limits, timeouts, TLS and decoding.
    ///   - eventLoopGroup: Where connections run; SwiftNIO's process-wide group by default.
    /// - Throws: ``/Courier/TLSOptions/Invalid`` when SwiftNIO SSL cannot read a certificate or
    ///   key of ``Configuration/tls``.
    public convenience init(
        configuration: Configuration = Configuration(), eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) throws(TLSOptions.Invalid) {
        self.init(
            configuration: configuration, eventLoopGroup: eventLoopGroup,
            tls: try configuration.tls.nioConfiguration(protocols: configuration.applicationProtocols))
    }

    /// A transport with SwiftNIO SSL's settings already made from `configuration.tls`.
    init(configuration: Configuration, eventLoopGroup: any EventLoopGroup, tls settings: TLSConfiguration) {
        self.configuration = configuration
        self.eventLoopGroup = eventLoopGroup
        // Made on the first https connection: reading the system's roots costs milliseconds that
        // a transport used only for http never pays.
        // The last route for an origin applies.
        let routes = Dictionary(configuration.routes.map { ($0.key, $0) }, uniquingKeysWith: { _, last in last })
        var proxySettings = settings
        proxySettings.applicationProtocols = ["http/1.1"]
        let connector = Connector(
            group: eventLoopGroup, tls: TLSContextCache(settings), proxyTLS: TLSContextCache(proxySettings), pins: configuration.tls.pinnedKeys,
            connectTimeout: TimeAmount(configuration.connectTimeout), proxies: configuration.proxies, routes: routes,
            resolver: configuration.resolver)
        let allowsHTTP2 = configuration.allowsHTTP2
        let rules = PoolStateMachine.Configuration(
            connectionsPerOrigin: configuration.connectionsPerHost, idleTimeout: TimeAmount(configuration.idleTimeout),
            maximumLifetime: configuration.maximumConnectionLifetime.map { TimeAmount($0) },
            mayShare: { origin in origin.isSecure ? allowsHTTP2 : routes[origin]?.speaksHTTP2 == true },
            backoff: configuration.connectionBackoff)
        pool = ConnectionPool(configuration: rules) { connector.connect(to: $0, timings: $1) }
        self.connector = connector
    }

    /// Shuts the transport down, gracefully: nothing new starts (a new hop fails with a
    /// ``/Courier/TransportFailure`` saying the transport was shut down), idle connections close,
    /// and hops under way finish (connections switched to another protocol, WebSockets, close);
    /// after `gracePeriod`, connections still busy are closed and
    /// their hops fail the same way. Returns once every connection is closed.
    /// - Parameter gracePeriod: How long hops under way may take to finish. Default 10 s.
    public func shutdown(gracePeriod: Duration = .seconds(10)) async {
        await pool.shutdown(gracePeriod: gracePeriod)
        // A switched connection (a WebSocket) has no hop to finish: it closes now.
        let switched = switchedChannels.withLockedValue { $0.values }
        for channel in switched { try? await channel.close() }
    }

    /// Sends `request`, one hop, and returns once its head arrives (a redirect's included).
    ///
    /// With ``/Courier/StreamOptions/buffersBody`` the body is gathered on the connection's event
    /// loop and handed over in hand; otherwise it streams with backpressure (reading from the
    /// socket stops while the reader is behind).
    /// - Parameters:
    ///   - request: The request.
    ///   - options: How the body is delivered.
    /// - Returns: The head and the body.
    /// - Throws: ``/Courier/CourierError``.
    public func send(hop request: Request, options: StreamOptions) async throws -> StreamedResponse {
        // Validated once per hop, by the exchange (or here, when called without one).
        let url = options.hopIsValid ? try request.renderedURLString() : try request.validatedURLString()
        let target: RequestTarget
        do {
            target = try RequestTarget(url: url)
        } catch {
            throw CourierError(error.cause, request: request)
        }
        let (head, body, upload) = render(request, target: target)
        if let upgrade = options.upgrade {
            return try await switching(request, to: upgrade, head: head, body: body, upload: upload, target: target, url: url, options: options)
        }
        // A body gathered under the exchange's rules: its idle timer watches the hop from here
        // (a wait for a connection included) on this transport's own terms, with no task of
        // its own, and the loop holds the gathered bytes to the size limit.
        let watch = HopWatch(options.rules)
        let gathering = options.buffersBody
            ? options.rules.map { GatheringRules(rules: $0, decodes: configuration.decodesBodies, url: url) } : nil
        let lease: ConnectionPool.Lease
        do {
            lease = try await pool.lease(target.origin, timings: options.timings, watch: watch)
        } catch {
            // A connection that could not be made (or was not tried) carried no earlier hop:
            // the exchange does not send the hop again on a new one.
            throw Self.lost(TransportErrors.courierError(for: error, request: request), reused: false)
        }
        let call: HTTP1Call
        // The hop's HTTP/2 stream (once it is open), if it has one.
        var sharedStream: EventLoopFuture<any Channel>?
        // Whether the hop's HTTP/1.1 connection carried earlier hops: a lost one is sent again
        // only then. HTTP/2 says itself that a stream was not processed (REFUSED_STREAM, a GOAWAY
        // below it), which makes a resend safe however old the connection: not marked.
        let reused: Bool?
        switch lease {
        case .http1(let connection, let id, let isNew):
            reused = !isNew
            if let timings = options.timings { Self.record(connection.channel, isNew: isNew, protocol: "http/1.1", in: timings) }
            var head = head
            if let proxy = connection.forwardingProxy {
                // RFC 9112 §3.2.2: to a proxy, the absolute URL (never its fragment).
                head.uri = target.absoluteForm
                if let authorization = proxy.authorization { head.headers.replaceOrAdd(name: "Proxy-Authorization", value: authorization) }
            }
            call = HTTP1Call(
                head: head, bodyInHand: body, upload: upload, progress: options.uploadProgress,
                gathers: options.buffersBody, timings: options.timings, rules: gathering, eventLoop: connection.channel.eventLoop)
            let pool = self.pool
            guard watch?.watching(call) ?? true else {
                pool.release(id, connection, reusable: true)
                throw CourierError(.cancelled, request: request)
            }
            call.start(on: connection.channel, handler: connection.handler) { reusable in pool.release(id, connection, reusable: reusable) }
        case .http2(let connection, let isNew):
            reused = nil
            if let timings = options.timings { Self.record(connection.channel, isNew: isNew, protocol: "h2", in: timings) }
            call = HTTP1Call(
                head: head, bodyInHand: body, upload: upload, progress: options.uploadProgress,
                gathers: options.buffersBody, timings: options.timings, rules: gathering, eventLoop: connection.channel.eventLoop)
            guard watch?.watching(call) ?? true else { throw CourierError(.cancelled, request: request) }
            // The stream is opened and the call started on it in one pass on the loop.
            sharedStream = connection.start(call)
        }
        let answer: HTTP1Answer
        do {
            answer = try await withTaskCancellationHandler {
                try await call.answered()
            } onCancel: {
                call.cancel()
            }
        } catch {
            var mapped = Self.lost(TransportErrors.courierError(for: error, request: request), reused: reused)
            // A stream a GOAWAY left out was not processed (RFC 9113 §8.7): the exchange may send
            // the hop again, on another connection, whatever its method. (Reset with CANCEL, or
            // ended by the connection's close right after the GOAWAY.)
            var streamID = (error as? NIOHTTP2Errors.StreamClosed)?.streamID
            if streamID == nil, let stream = try? await sharedStream?.get() {
                streamID = try? await stream.getOption(HTTP2StreamChannelOptions.streamID).get()
            }
            if case .http2(let connection, _) = lease, case .transport(var failure) = mapped.cause, failure.kind == .connectionLost,
                let streamID, connection.wasLeftOut(streamID)
            {
                failure.requestWasNotProcessed = true
                failure.message += "; a GOAWAY left the stream out, so the request was not processed"
                mapped.cause = .transport(failure)
            }
            throw mapped
        }
        watch?.finished()
        let response = Self.response(answer.head, url: url)
        let reader = BodyReader(
            request: request, contentEncoding: configuration.decodesBodies ? Self.coding(of: answer, answering: request.method) : nil)
        switch answer.body {
        case .complete(let buffer):
            return StreamedResponse(head: response, body: ByteStream(try reader.whole(buffer, rules: options.rules, head: response)))
        case .streaming(let pieces):
            return StreamedResponse(head: response, body: reader.stream(pieces, bufferLimit: options.bufferLimit))
        }
    }

    /// A response head in Courier's form, its fields converted only when asked for.
    static func response(_ head: HTTPResponseHead, url: String) -> Response {
        let headers = head.headers
        return Response(
            status: Int(head.status.code), urlString: url, field: { headers.first(name: $0.rawValue) }, headers: { Self.convert(headers) })
    }

    /// `error` saying, when it is a lost connection, whether that connection had carried earlier
    /// hops (``/Courier/TransportFailure/connectionWasReused``).
    static func lost(_ error: CourierError, reused: Bool?) -> CourierError {
        guard let reused, case .transport(var failure) = error.cause, failure.kind == .connectionLost else { return error }
        failure.connectionWasReused = reused
        var marked = error
        marked.cause = .transport(failure)
        return marked
    }

    /// Records the connection a hop was lent: opened for it or reused, its protocol, its peer.
    static func record(_ channel: any Channel, isNew: Bool, protocol name: String, in timings: HopTimings.Recorder) {
        timings.connection(isNew ? .new : .reused, protocol: name, remoteAddress: channel.remoteAddress.map(Connector.describe))
    }

    /// How many connections are open to `origin`, and how many speak HTTP/2 (for tests).
    func connectionCounts(_ origin: Origin) -> ConnectionPool.Counts { pool.counts(origin) }

    /// The `Content-Encoding` to undo, when there is a body to undo it on.
    private static func coding(of answer: HTTP1Answer, answering method: CourierCore.HTTPMethod) -> String? {
        let status = answer.head.status.code
        guard method != .head, status != 204, status != 304, status >= 200 else { return nil }
        return answer.head.headers.first(name: "content-encoding")
    }

    /// Response headers in Courier's form, in the order they arrived, repeats kept.
    static func convert(_ headers: NIOHTTP1.HTTPHeaders) -> CourierCore.HTTPHeaders {
        var fields: [CourierCore.HTTPHeaders.Field] = []
        fields.reserveCapacity(headers.count)
        for (name, value) in headers { fields.append(.init(name: HeaderName(rawValue: name), value: value)) }
        return CourierCore.HTTPHeaders(fields)
    }

    /// The request's head as sent, and its body: in hand, or read while it is sent and held to
    /// the length the head declares.
    func render(_ request: Request, target: RequestTarget) -> (HTTPRequestHead, ByteBuffer?, FramedBody?) {
        var headers = NIOHTTP1.HTTPHeaders()
        headers.reserveCapacity(request.headers.count + 3)
        var hasHost = false
        var hasAcceptEncoding = false
        // Repeated names joined by the core's rule (one Cookie field, RFC 6265 §5.4).
        for field in request.headers.joinedFields {
            switch field.name.canonical {
            // Framing is this transport's, from the body it sends.
            case "content-length", "transfer-encoding", "connection", "keep-alive", "upgrade", "te", "trailer": continue
            case "host": hasHost = true
            case "accept-encoding": hasAcceptEncoding = true
            default: break
            }
            headers.add(name: field.name.rawValue, value: field.value)
        }
        if !hasHost { headers.replaceOrAdd(name: "Host", value: target.origin.hostField) }
        // Courier decodes these itself, as URLSession does.
        if configuration.decodesBodies, !hasAcceptEncoding { headers.add(name: "Accept-Encoding", value: "gzip, deflate") }
        var body: ByteBuffer?
        var upload: FramedBody?
        if let source = request.bodySource {
            let framed = FramedBody(source)
            upload = framed
            if let length = framed.length {
                headers.add(name: "Content-Length", value: String(length))
            } else {
                headers.add(name: "Transfer-Encoding", value: "chunked")
            }
        } else if let data = request.body {
            headers.add(name: "Content-Length", value: String(data.count))
            body = ByteBuffer(data: data)
        } else if [.post, .put, .patch].contains(request.method) {
            // RFC 9110 §8.6: a request that usually has a body says it has none.
            headers.add(name: "Content-Length", value: "0")
        }
        let method = NIOHTTP1.HTTPMethod(rawValue: request.method.rawValue)
        return (HTTPRequestHead(version: .http1_1, method: method, uri: target.target, headers: headers), body, upload)
    }
}

extension TimeAmount {
    /// `duration` in nanoseconds, clamped to what a `TimeAmount` holds (a negative one is zero).
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else {
            self = .zero
            return
        }
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        self = overflow ? .nanoseconds(.max) : .nanoseconds(scaled.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue)
    }
}

/// A body read whole is gathered on the connection's event loop under the exchange's rules: the
/// idle timer watches the hop and the loop counts the bytes against the size limit, so a request
/// with a timeout or a size limit costs no task and no stream of its own.
@_spi(Transports) extension NIOTransport: GathersUnderRules {}
