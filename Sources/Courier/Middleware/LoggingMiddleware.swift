import Foundation

/// Reports each request, response and failure to a sink, with secrets redacted.
///
/// Messages use the request's ``Request/redaction``: credential headers, sensitive query values
/// and URL userinfo never reach the sink. Bodies are not logged.
///
/// ```swift
/// let executor = URLSessionExecutor().with(LoggingMiddleware { event in logger.debug("\(event)") })
/// // → GET https://api.example.com/v1/users?token=<redacted>
/// // ← 200 GET https://api.example.com/v1/users?token=<redacted> (12 ms, 341 bytes)
/// ```
public struct LoggingMiddleware: Middleware {
    /// One thing worth logging.
    public struct Event: Sendable, CustomStringConvertible {
        /// What happened.
        public enum Kind: Sendable, Hashable {
            /// A request is about to be sent.
            case request
            /// A response arrived.
            case response
            /// The request failed without a response.
            case failure
        }

        /// What happened.
        public var kind: Kind
        /// The request, redacted.
        public var request: Request
        /// The response, for ``Kind/response``.
        public var response: Response?
        /// The error, for ``Kind/failure``.
        public var error: CourierError?
        /// Time from sending to the response or failure.
        public var duration: Duration?

        /// Whether the failure is one expected on real networks (timeouts, lost connections,
        /// cancellation), as opposed to a bug or a misconfiguration.
        public var isTransient: Bool {
            guard let error else { return false }
            if case .cancelled = error.cause { return true }
            return error.isTransient
        }

        /// A one-line summary without secrets.
        public var description: String {
            let line = "\(request.method.rawValue) \(request.urlString(redacting: request.redaction) ?? "(no URL)")"
            let elapsed = duration.map { " (\(Self.milliseconds($0)) ms" } ?? " ("
            switch kind {
            case .request:
                return "→ \(line)"
            case .response:
                let status = response?.status ?? 0
                return "← \(status) \(line)\(elapsed), \(response?.body.count ?? 0) bytes)"
            case .failure:
                let reason = error?.summary ?? "unknown"
                return "✕ \(line)\(elapsed)) failed: \(reason)"
            }
        }

        private static func milliseconds(_ duration: Duration) -> Int64 {
            duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        }
    }

    /// Receives events; must be safe to call from any thread.
    public typealias Sink = @Sendable (Event) -> Void

    private let sink: Sink

    /// Creates the middleware.
    /// - Parameter sink: Receives events; prints their descriptions by default.
    public init(sink: @escaping Sink = { print($0) }) {
        self.sink = sink
    }

    /// Logs the request, sends it on, and logs the response or failure.
    /// - Parameters:
    ///   - request: The request.
    ///   - next: The rest of the chain.
    /// - Returns: The response.
    /// - Throws: Whatever `next` throws, unchanged.
    public func intercept(_ request: Request, next: Next) async throws -> Response {
        let redacted = request.redacted()
        sink(Event(kind: .request, request: redacted))
        let clock = ContinuousClock()
        let start = clock.now
        do {
            let response = try await next(request)
            sink(Event(kind: .response, request: redacted, response: response, duration: clock.now - start))
            return response
        } catch {
            let wrapped = CourierError.wrapping(error, request: request)
            sink(Event(kind: .failure, request: redacted, error: wrapped, duration: clock.now - start))
            throw error
        }
    }
}
