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
