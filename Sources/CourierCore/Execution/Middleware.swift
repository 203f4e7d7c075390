/// A step around an executor: it sees each request before it is sent and each response head
/// (or error) after, and may change, retry, short-circuit or observe them.
///
/// `Middleware` has one requirement, over the same shape as ``Transport``: a request in, a
/// response head with its body out. The body is in hand (``ByteStream/bufferedData``) when the
/// caller asked for a buffered response and the transport gathered it, and a live stream
/// otherwise: a middleware that only looks at the head (most of them) works on both without
/// reading the body, and one that needs the body reads ``ByteStream/bufferedData`` or, for a
/// stream, watches it go by with ``ByteStream/observing(chunk:end:)``. A response a middleware
/// drops (a retry supersedes it) should have its body cancelled (``ByteStream/cancel()``) so its
/// transfer stops at once.
///
/// Add middleware to an executor with ``Executor/with(_:)`` (once per call) or
/// ``Executor/eachHop(_:)`` (around every hop, redirects included); the result is an executor of
/// the same type.
///
/// **Order.** The first middleware in the list is the outermost: it sees the request first and
/// the response last. `executor.with(a, b)` runs `a → b → executor → b → a`.
///
/// ```swift
/// struct RequestID: Middleware {
///     func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
///         try await next(request |> header("X-Request-ID", UUID().uuidString))
///     }
/// }
/// let executor = URLSessionExecutor().with(RequestID(), LoggingMiddleware())
/// ```
public protocol Middleware: Sendable {
    /// The rest of the chain: the next middleware, or the executor.
    typealias Next = @Sendable (Request) async throws -> StreamedResponse

    /// Handles one request.
    /// - Parameters:
    ///   - request: The request, as changed by the middleware before this one.
    ///   - next: Sends a request through the rest of the chain. Call it zero or more times.
    /// - Returns: The response to hand back to the middleware before this one.
    /// - Throws: Any error; ``Executor/send(_:)-(Request)`` maps it to ``CourierError``.
    func intercept(_ request: Request, next: Next) async throws -> StreamedResponse
}

extension [any Middleware] {
    /// Runs `request` through these middleware from `index` on, outermost first, then `last`:
    /// the one fold of Courier's two middleware lists (per call and per hop, both on the
    /// ``Exchange``).
    func run(_ request: Request, from index: Int = 0, last: @escaping Middleware.Next) async throws -> StreamedResponse {
        guard index < count else { return try await last(request) }
        return try await self[index].intercept(request) { request in
            try await self.run(request, from: index + 1, last: last)
        }
    }
}

/// A middleware that reads ``StreamedResponse/timings``: an exchange with one (per call or per
/// hop) records every hop's timings, which it does not otherwise do (it costs an allocation and
/// a few clock readings per hop). ``HARRecorder`` is one; so are CourierMetrics'
/// `MetricsMiddleware` and CourierTracing's `TracingMiddleware`.
///
/// ```swift
/// struct SlowHops: Middleware, HopTimingsObserver {
///     func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
///         let response = try await next(request)
///         if let ttfb = response.timings?.firstByte, ttfb > .seconds(1) { print("slow: \(ttfb)") }
///         return response
///     }
/// }
/// ```
public protocol HopTimingsObserver: Middleware {}
