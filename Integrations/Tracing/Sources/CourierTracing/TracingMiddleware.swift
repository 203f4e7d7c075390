import CourierCore
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import Instrumentation
import Tracing

/// Starts a client span for every request, with OpenTelemetry's HTTP attributes, and injects
/// the span's context into the request's headers (`traceparent` and `tracestate` for a W3C
/// tracer) so the server continues the trace.
///
/// - Name: the method (`GET`), or what `name` makes of the request (for example the method and
///   a URL template: `GET /users/{id}`); never a raw path, which would carry identifiers.
/// - Attributes: `http.request.method`, `url.full` (userinfo and sensitive query values hidden),
///   `server.address`, `server.port`, `url.scheme`, `http.request.resend_count` (for a retry,
///   from ``/Courier/RetryPolicy/currentAttempt``), `courier.operation_id` (``/Courier/Request/operationID``, an OpenAPI
///   operation, when set), `http.response.status_code`, `http.response.body.size`,
///   `courier.cache.status` (when an ``/Courier/HTTPCache`` answered or passed the response), and
///   `error.type` (``/Courier/CourierError/errorType``, or the status code for a 4xx or 5xx, which
///   also set the span's status to error).
/// - The hop's ``/Courier/HopTimings`` (the middleware asks the exchange to record them), as far as
///   the transport reports them: attributes `network.protocol.name` (`http`),
///   `network.protocol.version` (`1.1`, `2`), `network.peer.address` and `network.peer.port`,
///   `courier.connection.reused`; and span events at the moments they happened, in order:
///   `queued.start`/`queued.end` (waiting for a pooled connection), `dns.start`/`dns.end`,
///   `connect.start`/`connect.end`, `tls.start`/`tls.end`, `request.started`, `request.sent`,
///   `response.first_byte` and `response.body_end`.
/// - The decisions of the resilience middleware inside it (``/Courier/ResilienceEvent``), as span
///   events `courier.resilience.circuit_opened`, `…circuit_half_opened`, `…circuit_closed`,
///   `…circuit_rejected`, `…retry_budget_exhausted`, `…hedge_sent`, `…hedge_won`, `…paced`,
///   `…rate_limited` and `…fault_injected`, with `courier.resilience.origin` and, when they apply,
///   `courier.resilience.delay` (seconds), `courier.resilience.attempt` and
///   `courier.resilience.detail`.
/// - The span ends with the response body: at once for a body in hand, when the reader is done
///   with a streamed one (never buffered to find out).
/// - Injection replaces any trace header the request already has, so a request never carries two
///   `traceparent`s; a transport that traces by itself would add a second (the AsyncHTTPClient
///   executor refuses a client that does).
///
/// Put it outside ``/Courier/RetryMiddleware`` for one span per call, inside for one per attempt.
/// In `with(_:)` one span covers the call, redirects included; in an exchange's
/// ``/Courier/Exchange/eachHop(_:)`` every redirect hop gets a span of its own.
///
/// ```swift
/// let executor = URLSessionExecutor().with(TracingMiddleware(), RetryMiddleware())
/// ```
public struct TracingMiddleware: HopTimingsObserver {
    private let tracer: any Tracer
    private let name: @Sendable (Request) -> String

    /// Creates the middleware.
    /// - Parameters:
    ///   - tracer: The tracer; the bootstrapped `InstrumentationSystem.tracer` by default.
    ///   - name: The span's name for a request; its method by default.
    public init(tracer: any Tracer = InstrumentationSystem.tracer, name: @escaping @Sendable (Request) -> String = { $0.method.rawValue }) {
        self.tracer = tracer
        self.name = name
    }

    /// Sends the request inside a client span; the response and errors pass through unchanged.
    /// - Parameters:
    ///   - request: The request.
    ///   - next: The rest of the chain.
    /// - Returns: The response (a streamed body observed, never buffered).
    /// - Throws: Whatever `next` throws.
    public func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
        let parent = InstrumentationContext.current ?? .topLevel
        let span = tracer.startSpan(name(request), context: parent, ofKind: .client)
        Self.describe(request, on: span)
        var traced = request
        var headers = traced.headers
        for name in ["traceparent", "tracestate"] { headers.remove(HeaderName(rawValue: name)) }
        tracer.inject(span.context, into: &headers, using: HeadersInjector())
        traced.headers = headers
        let response: StreamedResponse
        do {
            response = try await InstrumentationContext.withValue(span.context) {
                try await ResilienceEvent.observing({ event in Self.record(event, on: span) }) { try await next(traced) }
            }
        } catch {
            let failure = CourierError.wrapping(error, request: request)
            span.attributes["error.type"] = failure.errorType
            span.recordError(failure)
            span.setStatus(SpanStatus(code: .error))
            span.end()
            throw error
        }
        let status = response.status
        span.attributes["http.response.status_code"] = status
        if let cache = response.cacheStatus { span.attributes["courier.cache.status"] = cache.rawValue }
        if status >= 400 {
            span.attributes["error.type"] = String(status)
            span.setStatus(SpanStatus(code: .error))
        }
        if let body = response.body.bufferedData {
            span.attributes["http.response.body.size"] = body.count
            if let timings = response.timings { Self.describe(timings, on: span) }
            span.end()
            return response
        }
        var observed = response
        let hop = response
        observed.body = response.body.counting { ending, bytes in
            // Read at the body's end: the transport marked it before the reader saw it.
            if let timings = hop.timings { Self.describe(timings, on: span) }
            span.attributes["http.response.body.size"] = bytes
            switch ending {
            case .complete: break
            // The reader stopped or dropped the body: not a failure of the request.
            case .abandoned: span.attributes["courier.response.body.abandoned"] = true
            case .failed(let error):
                if case .cancelled = error.cause {} else {
                    span.attributes["error.type"] = error.errorType
                    span.recordError(error)
                    span.setStatus(SpanStatus(code: .error))
                }
            @unknown default: break
            }
            span.end()
        }
        return observed
    }

    /// A resilience middleware's decision inside the span, as an event named
    /// `courier.resilience.<kind>` with the origin and, when it has them, the delay and attempt.
    private static func record(_ event: ResilienceEvent, on span: any Span) {
        var attributes = SpanAttributes()
        attributes["courier.resilience.origin"] = event.origin
        if let delay = event.delay {
            attributes["courier.resilience.delay"] = Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18
        }
        if let attempt = event.attempt { attributes["courier.resilience.attempt"] = attempt }
        if let detail = event.detail { attributes["courier.resilience.detail"] = detail }
        span.addEvent(SpanEvent(name: "courier.resilience.\(event.kind.rawValue)", attributes: attributes))
    }

    /// The hop's connection as attributes, and its phases as events at the moments they happened.
    private static func describe(_ timings: HopTimings, on span: any Span) {
        span.updateAttributes { attributes in
            if let version = timings.httpVersion {
                attributes["network.protocol.name"] = "http"
                attributes["network.protocol.version"] = version
            }
            if let address = timings.remoteAddress, let (host, port) = peer(address) {
                attributes["network.peer.address"] = host
                if let port { attributes["network.peer.port"] = port }
            }
            if let connection = timings.connection { attributes["courier.connection.reused"] = connection == .reused }
        }
        var events: [(String, Duration)] = []
        for phase in HopTimings.Phase.allCases {
            guard let interval = timings[phase] else { continue }
            events.append(("\(phase.rawValue).start", interval.start))
            events.append(("\(phase.rawValue).end", interval.end))
        }
        let marks: [(HopTimings.Mark, String)] = [
            (.requestStarted, "request.started"), (.requestSent, "request.sent"), (.firstByte, "response.first_byte"),
            (.bodyEnded, "response.body_end"),
        ]
        for (mark, name) in marks {
            if let offset = timings[mark] { events.append((name, offset)) }
        }
        // In the order they happened; a phase's start before its end when both are at one moment.
        // Offsets are added in whole nanoseconds, so the distances between events are exact.
        let start = WallInstant(timings.startedAt)
        for (name, offset) in events.enumerated().sorted(by: { ($0.element.1, $0.offset) < ($1.element.1, $1.offset) }).map(\.element) {
            span.addEvent(SpanEvent(name: name, at: start.advanced(by: offset)))
        }
    }

    /// `127.0.0.1:8080` → (`127.0.0.1`, 8080); `[::1]:443` → (`::1`, 443).
    static func peer(_ address: String) -> (String, Int?)? {
        if address.hasPrefix("["), let close = address.firstIndex(of: "]") {
            let host = String(address[address.index(after: address.startIndex)..<close])
            let rest = address[address.index(after: close)...]
            return (host, rest.hasPrefix(":") ? Int(rest.dropFirst()) : nil)
        }
        guard let colon = address.lastIndex(of: ":") else { return (address, nil) }
        return (String(address[..<colon]), Int(address[address.index(after: colon)...]))
    }

    /// The request's attributes, redacted.
    private static func describe(_ request: Request, on span: any Span) {
        span.updateAttributes { attributes in
            attributes["http.request.method"] = request.method.rawValue
            if let url = request.redactedURLString { attributes["url.full"] = url }
            if let base = request.baseURL, let host = base.host {
                let scheme = base.scheme?.lowercased() ?? ""
                attributes["server.address"] = host
                if let port = base.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : nil) { attributes["server.port"] = port }
                attributes["url.scheme"] = scheme
            }
            if let operation = request.operationID { attributes["courier.operation_id"] = operation }
            // Retries before this attempt, and redirects followed before this hop when the
            // middleware runs per hop (`eachHop`).
            let resends = Exchange.currentAttempt - 1 + Exchange.currentHop
            if resends > 0 { attributes["http.request.resend_count"] = resends }
        }
    }
}

/// Writes a tracer's context into Courier's headers, replacing what a key already holds.
struct HeadersInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout CourierCore.HTTPHeaders) {
        carrier.set(HeaderName(rawValue: key), value)
    }
}

/// A wall-clock moment as swift-distributed-tracing takes one.
struct WallInstant: TracerInstant {
    let nanosecondsSinceEpoch: UInt64

    init(_ date: Date) {
        nanosecondsSinceEpoch = UInt64(max(0, date.timeIntervalSince1970 * 1_000_000_000))
    }

    private init(nanoseconds: UInt64) { nanosecondsSinceEpoch = nanoseconds }

    static func < (lhs: WallInstant, rhs: WallInstant) -> Bool { lhs.nanosecondsSinceEpoch < rhs.nanosecondsSinceEpoch }

    /// This moment plus `offset` (never negative).
    func advanced(by offset: Duration) -> WallInstant {
        let nanoseconds = max(0, offset.components.seconds * 1_000_000_000 + offset.components.attoseconds / 1_000_000_000)
        return WallInstant(nanoseconds: nanosecondsSinceEpoch &+ UInt64(nanoseconds))
    }
}
