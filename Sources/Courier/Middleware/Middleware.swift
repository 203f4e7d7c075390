/// A step around an executor: it sees each request before it is sent and each response (or
/// error) after, and may change, retry, short-circuit or observe them.
///
/// Wrap an executor with ``Executor/with(_:)``; the result is again an ``Executor``.
///
/// **Order.** The first middleware in the list is the outermost: it sees the request first and
/// the response last. `executor.with(a, b)` runs `a → b → executor → b → a`.
///
/// ```swift
/// struct RequestID: Middleware {
///     func intercept(_ request: Request, next: Next) async throws -> Response {
///         try await next(request |> header("X-Request-ID", UUID().uuidString))
///     }
/// }
/// let executor = URLSessionExecutor().with(RequestID(), LoggingMiddleware())
/// ```
public protocol Middleware: Sendable {
    /// The rest of the chain: the next middleware, or the executor.
    typealias Next = @Sendable (Request) async throws -> Response

    /// Handles one request.
    /// - Parameters:
    ///   - request: The request, as changed by the middleware before this one.
    ///   - next: Sends a request through the rest of the chain. Call it zero or more times.
    /// - Returns: The response to hand back to the middleware before this one.
    /// - Throws: Any error; ``Executor/send(_:)-(Request)`` maps it to ``CourierError``.
    func intercept(_ request: Request, next: Next) async throws -> Response

    /// The rest of the chain, for a streamed exchange.
    typealias StreamNext = @Sendable (Request) async throws -> StreamedResponse

    /// Handles one streamed request (``Executor/stream(_:options:)``).
    ///
    /// The default implementation runs ``intercept(_:next:)`` on the response *head* (status,
    /// headers, an empty body), so middleware that changes requests, retries on a status or a
    /// transport error, or refreshes credentials on a 401 works for streams unchanged: it acts
    /// before the first body byte is handed over. A middleware that returns a response with a body
    /// of its own (a cache, a stub) answers the stream with that body. Implement this method to
    /// see the body itself (``ByteStream/observing(chunk:end:)``) or to hold a resource until the
    /// stream ends.
    /// - Parameters:
    ///   - request: The request.
    ///   - next: Sends a request through the rest of the chain.
    /// - Returns: The streamed response to hand back.
    /// - Throws: Any error before the head.
    func interceptStream(_ request: Request, next: StreamNext) async throws -> StreamedResponse
}

/// An executor wrapped in middleware; see ``Middleware`` for the order they run in.
public struct MiddlewareExecutor: Executor {
    /// The wrapped executor.
    public let base: any Executor
    /// The middleware, outermost first.
    public let middleware: [any Middleware]

    /// Wraps `base` in `middleware`, outermost first.
    /// - Parameters:
    ///   - base: The executor that sends requests.
    ///   - middleware: The middleware, outermost first.
    public init(base: any Executor, middleware: [any Middleware]) {
        self.base = base
        self.middleware = middleware
    }

    /// Runs `request` through the middleware and the base executor.
    /// - Parameter request: The request.
    /// - Returns: The response as the outermost middleware returns it.
    /// - Throws: Whatever the chain throws.
    public func execute(_ request: Request) async throws -> Response {
        try await run(request, from: 0)
    }

    /// Runs a streamed `request` through the middleware and the base executor.
    /// - Parameters:
    ///   - request: The request.
    ///   - options: The buffer limit and progress reporting.
    /// - Returns: The streamed response as the outermost middleware returns it.
    /// - Throws: Whatever the chain throws before the head.
    public func executeStream(_ request: Request, options: StreamOptions) async throws -> StreamedResponse {
        try await runStream(request, from: 0, options: options)
    }

    private func runStream(_ request: Request, from index: Int, options: StreamOptions) async throws -> StreamedResponse {
        guard index < middleware.count else { return try await base.executeStream(request, options: options) }
        return try await middleware[index].interceptStream(request) { request in
            try await self.runStream(request, from: index + 1, options: options)
        }
    }

    private func run(_ request: Request, from index: Int) async throws -> Response {
        guard index < middleware.count else { return try await base.execute(request) }
        return try await middleware[index].intercept(request) { request in
            try await self.run(request, from: index + 1)
        }
    }
}

extension Executor {
    /// Wraps this executor in middleware, outermost first.
    /// - Parameter middleware: The middleware; the first sees the request first.
    /// - Returns: An executor that runs the middleware around this one.
    public func with(_ middleware: any Middleware...) -> MiddlewareExecutor {
        MiddlewareExecutor(base: self, middleware: middleware)
    }
}
