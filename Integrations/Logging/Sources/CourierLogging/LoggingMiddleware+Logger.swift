import CourierCore
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import Logging

extension LoggingMiddleware {
    /// The swift-log levels traffic is logged at.
    public struct LogLevels: Sendable, Hashable {
        /// A request about to be sent; `.trace` by default.
        public var request: Logger.Level
        /// A response head (and a body in hand); `.debug` by default.
        public var response: Logger.Level
        /// A streamed body that ended; `.debug` by default.
        public var streamEnded: Logger.Level
        /// A request that failed, or a stream that ended with an error; `.debug` by default (the
        /// caller receives the error and decides how loud it is, as libraries should).
        public var failure: Logger.Level
        /// A decision of the resilience middleware inside the logging (a breaker opened, a
        /// budget ran out, a hedge, a rate-limit wait, an injected fault); `.info` by default,
        /// since it tells how the service it calls is doing.
        public var resilience: Logger.Level = .info

        /// Creates the levels.
        /// - Parameters:
        ///   - request: For requests about to be sent.
        ///   - response: For responses.
        ///   - streamEnded: For streamed bodies that ended normally.
        ///   - failure: For failures.
        public init(request: Logger.Level = .trace, response: Logger.Level = .debug, streamEnded: Logger.Level = .debug, failure: Logger.Level = .debug) {
            self.request = request
            self.response = response
            self.streamEnded = streamEnded
            self.failure = failure
        }
    }

    /// Logging middleware that writes each event to a swift-log `Logger`, with the event's
    /// one-line summary as the message and OpenTelemetry's attribute names as metadata, every
    /// value redacted as ``/Courier/LoggingMiddleware`` redacts it:
    ///
    /// | key | value |
    /// | --- | --- |
    /// | `http.request.method` | `GET` |
    /// | `url.full` | the URL with userinfo and sensitive query values hidden |
    /// | `server.address`, `server.port` | the host and port |
    /// | `http.request.resend_count` | the retry attempt minus one, when it is a retry |
    /// | `http.response.status_code` | `200` (responses) |
    /// | `http.response.body.size` | bytes received (a body in hand, or a stream that ended) |
    /// | `courier.cache.status` | `hit`, `revalidated`, `stale` or `miss`, when an ``/Courier/HTTPCache`` answered or passed it |
    /// | `http.client.request.duration` | seconds from sending to this event |
    /// | `error.type` | ``/Courier/CourierError/errorType`` (failures) |
    /// | `courier.event` | `request`, `response`, `stream_ended`, `failure` or `resilience` |
    /// | `courier.resilience.event`, `.origin`, `.delay`, `.attempt`, `.detail` | a resilience middleware's decision (``/Courier/ResilienceEvent``), for `resilience` events |
    /// | `courier.stream.ending` | `complete`, `abandoned` (the reader stopped or dropped the body: not a failure) or `failed` (stream ends) |
    /// | `courier.operation_id` | the request's ``/Courier/Request/operationID`` (an OpenAPI operation), when set |
    /// | `courier.request.body`, `courier.response.body` | the body as logged, when `bodies` is on |
    ///
    /// ```swift
    /// let logger = Logger(label: "api")
    /// let executor = URLSessionExecutor().with(RetryMiddleware(), LoggingMiddleware(logger: logger))
    /// ```
    /// - Parameters:
    ///   - logger: The logger; its own metadata and metadata provider apply as usual.
    ///   - levels: The level of each kind of event.
    ///   - redaction: More header and query names to hide, on top of each request's own.
    ///   - bodies: Whether bodies are logged (capped and redacted); off by default.
    public init(logger: Logger, levels: LogLevels = LogLevels(), redaction: Redaction = Redaction(), bodies: BodyLogging = .off) {
        self.init(redaction: redaction, bodies: bodies) { event in
            let level: Logger.Level
            switch event.kind {
            case .request: level = levels.request
            case .response: level = levels.response
            case .streamEnded: level = event.error == nil ? levels.streamEnded : levels.failure
            case .failure: level = levels.failure
            case .resilience: level = levels.resilience
            // A kind a later Courier adds: logged as a response is.
            @unknown default: level = levels.response
            }
            // The metadata is built only when the level is enabled.
            guard logger.logLevel <= level else { return }
            logger.log(level: level, "\(event.description)", metadata: Self.metadata(of: event))
        }
    }

    /// The event's metadata, by OpenTelemetry's attribute names.
    static func metadata(of event: Event) -> Logger.Metadata {
        var metadata: Logger.Metadata = [
            "http.request.method": "\(event.request.method.rawValue)",
            "courier.event": "\(Self.name(of: event.kind))",
        ]
        if let url = event.request.redactedURLString { metadata["url.full"] = "\(url)" }
        if let base = event.request.baseURL, let host = base.host {
            metadata["server.address"] = "\(host)"
            if let port = base.port ?? (base.scheme?.lowercased() == "https" ? 443 : base.scheme?.lowercased() == "http" ? 80 : nil) {
                metadata["server.port"] = "\(port)"
            }
        }
        if let operation = event.request.operationID { metadata["courier.operation_id"] = "\(operation)" }
        if event.resendCount > 0 { metadata["http.request.resend_count"] = "\(event.resendCount)" }
        if let response = event.response {
            metadata["http.response.status_code"] = "\(response.status)"
            if let cache = response.cacheStatus { metadata["courier.cache.status"] = "\(cache.rawValue)" }
            if event.kind == .response, !response.body.isEmpty { metadata["http.response.body.size"] = "\(response.body.count)" }
        }
        if let bytes = event.streamedBytes { metadata["http.response.body.size"] = "\(bytes)" }
        if let duration = event.duration {
            let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
            metadata["http.client.request.duration"] = "\(seconds)"
        }
        if let error = event.error { metadata["error.type"] = "\(error.errorType)" }
        switch event.ending {
        case .complete?: metadata["courier.stream.ending"] = "complete"
        case .abandoned?: metadata["courier.stream.ending"] = "abandoned"
        case .failed?: metadata["courier.stream.ending"] = "failed"
        case let other?: metadata["courier.stream.ending"] = "\(other)"
        case nil: break
        }
        if let decided = event.resilience {
            metadata["courier.resilience.event"] = "\(decided.kind.rawValue)"
            metadata["courier.resilience.origin"] = "\(decided.origin)"
            if let delay = decided.delay {
                metadata["courier.resilience.delay"] = "\(Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18)"
            }
            if let attempt = decided.attempt { metadata["courier.resilience.attempt"] = "\(attempt)" }
            if let detail = decided.detail { metadata["courier.resilience.detail"] = "\(detail)" }
        }
        if let body = event.requestBody { metadata["courier.request.body"] = "\(body)" }
        if let body = event.responseBody { metadata["courier.response.body"] = "\(body)" }
        return metadata
    }

    private static func name(of kind: Event.Kind) -> String {
        switch kind {
        case .request: "request"
        case .response: "response"
        case .streamEnded: "stream_ended"
        case .failure: "failure"
        case .resilience: "resilience"
        @unknown default: "\(kind)"
        }
    }
}
