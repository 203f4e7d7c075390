/// A step around an executor: it sees each request before it is sent and each response head
/// (or error) after, and may change, retry, short-circuit or observe them.
///
/// `Middleware` has one requirement, over the same shape as ``Executor``: a request in, a
/// response head with its body out. The body is in hand (``ByteStream/bufferedData``) when the
/// caller asked for a buffered response and the transport gathered it, and a live stream
/// otherwise: a middleware that only looks at the head (most of them) works on both without
/// reading the body, and one that needs the body reads ``ByteStream/bufferedData`` or, for a
/// stream, watches it go by with ``ByteStream/observing(chunk:end:)``. A response a middleware
/// drops (a retry supersedes it) should have its body cancelled (``ByteStream/cancel()``) so its
/// transfer stops at once.
///
/// Wrap an executor with ``Executor/with(_:)``; the result is again an ``Executor``.
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
    /// - Parameters:
    ///   - request: The request.
    ///   - options: How the body is delivered; handed to the base executor.
    /// - Returns: The response as the outermost middleware returns it.
    /// - Throws: Whatever the chain throws.
    public func execute(_ request: Request, options: StreamOptions) async throws -> StreamedResponse {
        try await run(request, from: 0, options: options)
    }

    private func run(_ request: Request, from index: Int, options: StreamOptions) async throws -> StreamedResponse {
        guard index < middleware.count else { return try await base.settledResponse(to: request, options: options) }
        return try await middleware[index].intercept(request) { request in
            try await self.run(request, from: index + 1, options: options)
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
