import CoreMetrics
import CourierAsyncHTTPClient
import CourierCore
import CourierLogging
import CourierMetrics
import CourierOpenAPI
// Re-exported: `init` takes a `RetryPolicy`, so a caller configures the service's retries
// without importing Courier's resilience module itself.
@_exported import CourierResilience
import CourierTracing
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import Logging
import Tracing

/// The notes service's client, put together in one place: the generated `Client` over a Courier
/// executor with the middleware a production client wants.
///
/// From the outside in:
/// 1. `TracingMiddleware`: a client span per call, named by its operation, with the trace
///    context sent to the server.
/// 2. `MetricsMiddleware`: OpenTelemetry's HTTP client metrics, once per call.
/// 3. `RetryMiddleware`: transient failures, `408`, `429` and `5xx` retried with backoff and
///    jitter, `Retry-After` honoured. Safe methods only, and the `createNote` operation, which
///    the server deduplicates by its `Idempotency-Key` (``retryableOperations``). Retries are
///    held to a fifth of recent calls by a `RetryBudget`, so that the service's clients do not
///    multiply an outage's load.
/// 4. `LoggingMiddleware` on swift-log: every attempt, with `http.request.resend_count` on a
///    retry and the operation ID; no header value, so never the token. It also logs what the
///    breaker inside it decides.
/// 5. `CircuitBreaker`: after half of 20 recent attempts failed, calls fail at once for 15 s
///    instead of waiting on a service that is down (a `circuitOpen` error, not retried).
/// 6. `AuthRefreshMiddleware`: the bearer token, for the service's origin only; a `401` fetches
///    a new one once for every request waiting, then retries.
public struct NotesService: Sendable {
    /// The operations the server deduplicates, so a retry cannot create a second note.
    public static let retryableOperations: Set<String> = ["createNote"]

    /// The generated client: `createNote`, `whoAmI`, `health`.
    public let client: Client

    /// Puts the client together.
    /// - Parameters:
    ///   - serverURL: Where the service runs.
    ///   - executor: The transport; AsyncHTTPClient's shared client by default. A test passes an
    ///     `InMemoryExecutor`.
    ///   - retry: The retry policy.
    ///   - logger: Where traffic is logged (at `.debug` and `.trace`).
    ///   - metrics: Where metrics go; the bootstrapped `MetricsSystem.factory` by default.
    ///   - tracer: Where spans go; the bootstrapped `InstrumentationSystem.tracer` by default.
    ///   - token: Fetches a bearer token, before the first request and after a `401` (given the
    ///     token that was rejected).
    public init(
        serverURL: URL, executor: any Executor = AsyncHTTPClientExecutor.shared, retry: RetryPolicy = RetryPolicy(),
        logger: Logger, metrics: any MetricsFactory = MetricsSystem.factory, tracer: any Tracer = InstrumentationSystem.tracer,
        token: @escaping @Sendable (_ rejected: String?) async throws -> String
    ) {
        let stack = executor.with(
            TracingMiddleware(tracer: tracer) { request in request.operationID ?? request.method.rawValue },
            MetricsMiddleware(factory: metrics),
            RetryMiddleware(policy: retry, budget: RetryBudget()),
            LoggingMiddleware(logger: logger),
            CircuitBreaker(policy: .init(failureRatio: 0.5, minimumCalls: 20, breakDuration: .seconds(15))),
            AuthRefreshMiddleware(origins: [serverURL.absoluteString], refresh: token)
        )
        client = Client(serverURL: serverURL, transport: CourierTransport(stack, retryableOperations: Self.retryableOperations))
    }
}
