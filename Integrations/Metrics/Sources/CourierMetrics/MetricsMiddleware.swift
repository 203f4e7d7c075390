import CoreMetrics
import CourierCore
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Records OpenTelemetry's HTTP client metrics for every request, by their standard names and
/// dimensions, through swift-metrics:
///
/// | metric | swift-metrics type | what |
/// | --- | --- | --- |
/// | `http.client.request.duration` | `Timer` (shown in seconds) | from sending to the end of the response body (a streamed body: when the reader is done with it) |
/// | `http.client.request.body.size` | `Recorder` (bytes) | the request body, when its size is known |
/// | `http.client.response.body.size` | `Recorder` (bytes) | the response body the reader took |
/// | `http.client.active_requests` | `Meter` | requests in flight, until their body ends |
/// | `http.client.request.time_in_queue` | `Timer` (seconds) | waiting for a pooled connection, when the hop had to |
/// | `dns.lookup.duration` | `Timer` (seconds) | resolving the host, when the transport did (dimension `dns.question.name`) |
/// | `courier.client.connect.duration` | `Timer` (seconds) | opening a connection (TCP, and a proxy's tunnel) |
/// | `courier.client.tls.handshake.duration` | `Timer` (seconds) | the TLS handshake of a new connection |
/// | `courier.client.time_to_first_byte` | `Timer` (seconds) | from the hop's start to its response head |
/// | `courier.client.resilience.events` | `Counter` | decisions of the resilience middleware inside it (``/Courier/ResilienceEvent``), by `courier.resilience.event`: `circuit_opened`, `circuit_half_opened`, `circuit_closed`, `circuit_rejected`, `retry_budget_exhausted`, `hedge_sent`, `hedge_won`, `paced`, `rate_limited`, `fault_injected` |
/// | `courier.client.rate_limit.wait` | `Timer` (seconds) | how long a call waited for a server's rate limit (``/Courier/ServerPacing``) |
///
/// The phase metrics come from the hop's ``/Courier/HopTimings`` (the middleware asks the exchange
/// to record them): a transport that does not report a phase records none of it, and a reused
/// connection records no lookup, connect or handshake. Their dimensions are the request's
/// (method, server, scheme) and, when the transport says, `network.protocol.version` (`1.1`,
/// `2`), which `http.client.request.duration` carries too.
///
/// Dimensions: `http.request.method`, `server.address`, `server.port`, `url.scheme`, and on the
/// duration and sizes `http.response.status_code` (when a response arrived) and `error.type`
/// (``/Courier/CourierError/errorType`` for a failure, the status code for a 4xx or 5xx, as the
/// conventions say), and `courier.cache.status` (`hit`, `revalidated`, `stale` or `miss`) when the
/// response went through an ``/Courier/HTTPCache``. A streamed body the reader stops reading, or drops unread (a generated
/// client's operation that declares no content), is not an error: the request counts by its
/// status, and the body size is what the reader took. No URL path, query or header value is
/// ever a dimension: cardinality stays bounded and secrets stay out.
///
/// Put it inside ``/Courier/RetryMiddleware`` to count every attempt, outside to count each call
/// once.
///
/// ```swift
/// let executor = URLSessionExecutor().with(RetryMiddleware(), MetricsMiddleware())
/// ```
public struct MetricsMiddleware: HopTimingsObserver {
    private let factory: any MetricsFactory

    /// Creates the middleware.
    /// - Parameter factory: Where the metrics go; the bootstrapped `MetricsSystem.factory` by
    ///   default (a test passes `MetricsTestKit`'s `TestMetrics`).
    public init(factory: any MetricsFactory = MetricsSystem.factory) {
        self.factory = factory
    }

    /// Sends the request and records its metrics; the response and errors pass through unchanged.
    /// - Parameters:
    ///   - request: The request.
    ///   - next: The rest of the chain.
    /// - Returns: The response (a streamed body observed, never buffered).
    /// - Throws: Whatever `next` throws.
    public func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
        let base = Self.baseDimensions(of: request)
        let active = Meter(label: "http.client.active_requests", dimensions: base, factory: factory)
        active.increment()
        if let size = request.body?.count ?? request.bodySource?.knownLength.map(Int.init) {
            Recorder(label: "http.client.request.body.size", dimensions: base, factory: factory).record(size)
        }
        let clock = ContinuousClock()
        let start = clock.now
        let factory = self.factory
        let finishing: @Sendable ([(String, String)], Int?, CourierError?, Int?, CacheStatus?) -> Void = { base, status, error, bytes, cache in
            var dimensions = base
            if let status { dimensions.append(("http.response.status_code", String(status))) }
            if let cache { dimensions.append(("courier.cache.status", cache.rawValue)) }
            if let error {
                dimensions.append(("error.type", error.errorType))
            } else if let status, status >= 400 {
                dimensions.append(("error.type", String(status)))
            }
            let elapsed = clock.now - start
            Timer(label: "http.client.request.duration", dimensions: dimensions, preferredDisplayUnit: .seconds, factory: factory)
                .recordNanoseconds(elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000)
            if let bytes {
                Recorder(label: "http.client.response.body.size", dimensions: dimensions, factory: factory).record(bytes)
            }
            active.decrement()
        }
        let response: StreamedResponse
        do {
            response = try await ResilienceEvent.observing({ event in Self.record(event, dimensions: base, factory: factory) }) {
                try await next(request)
            }
        } catch {
            finishing(base, nil, CourierError.wrapping(error, request: request), nil, nil)
            throw error
        }
        let cache = response.cacheStatus
        let timings = response.timings
        var hop = base
        if let version = timings?.httpVersion { hop.append(("network.protocol.version", version)) }
        if let timings { Self.recordPhases(of: timings, dimensions: hop, request: request, factory: factory) }
        let finish: @Sendable (Int?, CourierError?, Int?, CacheStatus?) -> Void = { [hop] status, error, bytes, cache in
            finishing(hop, status, error, bytes, cache)
        }
        if let body = response.body.bufferedData {
            finish(response.status, nil, body.count, cache)
            return response
        }
        let status = response.status
        var observed = response
        // A body its reader left unread is not a failure: the request counts by its status.
        observed.body = response.body.counting { ending, bytes in finish(status, ending.error, bytes, cache) }
        return observed
    }

    /// A resilience middleware's decision: counted by kind, and a pacing wait timed.
    private static func record(_ event: ResilienceEvent, dimensions: [(String, String)], factory: any MetricsFactory) {
        Counter(
            label: "courier.client.resilience.events", dimensions: dimensions + [("courier.resilience.event", event.kind.rawValue)],
            factory: factory
        ).increment()
        if event.kind == .paced, let delay = event.delay {
            Timer(label: "courier.client.rate_limit.wait", dimensions: dimensions, preferredDisplayUnit: .seconds, factory: factory)
                .recordNanoseconds(delay.components.seconds * 1_000_000_000 + delay.components.attoseconds / 1_000_000_000)
        }
    }

    /// The phases of the hop the response came by, each a timer of its own.
    private static func recordPhases(
        of timings: HopTimings, dimensions: [(String, String)], request: Request, factory: any MetricsFactory
    ) {
        func record(_ label: String, _ duration: Duration?, extra: [(String, String)] = []) {
            guard let duration else { return }
            Timer(label: label, dimensions: dimensions + extra, preferredDisplayUnit: .seconds, factory: factory)
                .recordNanoseconds(duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
        }
        record("http.client.request.time_in_queue", timings.queued?.duration)
        let host = request.baseURL?.host
        record("dns.lookup.duration", timings.dns?.duration, extra: host.map { [("dns.question.name", $0)] } ?? [])
        record("courier.client.connect.duration", timings.connect?.duration)
        record("courier.client.tls.handshake.duration", timings.tls?.duration)
        record("courier.client.time_to_first_byte", timings.firstByte)
    }

    /// `http.request.method`, `server.address`, `server.port` and `url.scheme`.
    static func baseDimensions(of request: Request) -> [(String, String)] {
        var dimensions = [("http.request.method", request.method.rawValue)]
        if let base = request.baseURL, let host = base.host {
            let scheme = base.scheme?.lowercased() ?? ""
            dimensions.append(("server.address", host))
            if let port = base.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : nil) {
                dimensions.append(("server.port", String(port)))
            }
            dimensions.append(("url.scheme", scheme))
        }
        return dimensions
    }
}
