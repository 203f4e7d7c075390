#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a call is sent with: anything that holds an ``Exchange``, the one path every call of
/// every transport takes.
///
/// An executor is configuration, not code: the ``exchange`` says which ``Transport`` sends each
/// hop, how redirects are followed, which middleware run once per call (``with(_:)``) and which
/// around every hop (``eachHop(_:)``), and the limits bodies are held to. Everything a call does is
/// written once, on the exchange, whatever the transport: ``send(_:)-(Request)`` and
/// ``send(_:)-(Resource<Value>)`` (validation, deadlines, decoding), ``stream(_:options:)``,
/// ``download(_:to:options:)``, the completion-handler forms and pagination. So a test over an
/// ``InMemoryExecutor`` runs the same steps as the app over ``URLSessionExecutor``.
///
/// Courier ships ``URLSessionExecutor`` (the network), ``CallbackExecutor`` (any
/// completion-handler transport), ``InMemoryExecutor`` (tests and offline demos),
/// ``HARReplayExecutor`` (recorded traffic) and, in its own package, `AsyncHTTPClientExecutor`.
/// To send through something else, write a ``Transport`` (one hop) and wrap it in an
/// ``Exchange``, which is an executor itself:
///
/// ```swift
/// struct Canned: Transport {
///     func send(hop request: Request, options: StreamOptions) async throws -> StreamedResponse {
///         StreamedResponse(status: 200, body: ByteStream(Data("hello".utf8)))
///     }
/// }
/// let executor = Exchange(transport: Canned()).with(LoggingMiddleware())
/// ```
///
/// Executors are values: ``with(_:)``, ``eachHop(_:)`` and the settable ``redirects`` and
/// ``maximumResponseSize`` give a configured copy of the same type, which shares the transport
/// (its connections, sessions and recorded requests) with the original.
public protocol Executor: Sendable {
    /// The exchange every call of this executor runs through: the transport, the redirect
    /// policy, the middleware and the limits.
    var exchange: Exchange { get set }
}

extension Executor {
    /// How redirects are followed (``Exchange/redirects``).
    public var redirects: RedirectPolicy {
        get { exchange.redirects }
        set { exchange.redirects = newValue }
    }

    /// The most bytes a response body may have, counted after decompression (error and redirect
    /// bodies included), or `nil` for no limit (``Exchange/maximumResponseSize``). A larger body
    /// stops its transfer with ``CourierError/Cause/responseTooLarge(limit:)``.
    public var maximumResponseSize: Int? {
        get { exchange.maximumResponseSize }
        set { exchange.maximumResponseSize = newValue }
    }

    /// This executor with `middleware` run once per call, outside the middleware it has: the
    /// first in the list sees the request first and the response last (see ``Middleware``).
    ///
    /// ```swift
    /// let api = URLSessionExecutor().with(RetryMiddleware(), LoggingMiddleware())
    /// ```
    /// - Parameter middleware: The middleware, outermost first.
    /// - Returns: A copy of this executor; it shares the transport.
    public func with(_ middleware: any Middleware...) -> Self {
        var copy = self
        copy.exchange.middleware.insert(contentsOf: middleware, at: 0)
        return copy
    }

    /// This executor with `middleware` run around every hop of a call (each redirect too),
    /// inside the hop middleware it has: a cache, a cookie jar, a recorder of what goes on the
    /// wire.
    ///
    /// ```swift
    /// let stubs = InMemoryExecutor(routes: routes).eachHop(HTTPCache())
    /// ```
    /// - Parameter middleware: The middleware, outermost first.
    /// - Returns: A copy of this executor; it shares the transport.
    public func eachHop(_ middleware: any Middleware...) -> Self {
        var copy = self
        copy.exchange.hopMiddleware += middleware
        return copy
    }

    /// This executor with every hop's ``HopTimings`` recorded (``Exchange/recordsTimings``), for
    /// ``StreamedResponse/timings``. A ``HopTimingsObserver`` middleware needs no call to this.
    ///
    /// ```swift
    /// let response = try await executor.recordingTimings().stream(request)
    /// print(response.timings?.firstByte ?? .zero)
    /// ```
    /// - Parameter on: Whether to record them; `true` by default.
    /// - Returns: This executor, recording timings or not.
    public func recordingTimings(_ on: Bool = true) -> Self {
        var copy = self
        copy.exchange.recordsTimings = on
        return copy
    }

    /// Sends `request` through the exchange (per-call middleware, every hop, the body rules) and
    /// returns as soon as the final head arrives, with the body in hand or still arriving. The
    /// step under ``send(_:)-(Request)`` and ``stream(_:options:)``, which add validation, the
    /// deadline and the error's context; call those instead.
    /// - Parameters:
    ///   - request: The request.
    ///   - options: How the body is delivered: buffer limits, upload progress, whether the
    ///     caller reads it whole.
    /// - Returns: The response head and its body, whatever the status.
    /// - Throws: ``CourierError``.
    public func execute(_ request: Request, options: StreamOptions) async throws(CourierError) -> StreamedResponse {
        try await exchange.execute(request, options: options)
    }
}

/// A decoded value with the response it came from.
public struct DecodedResponse<Value> {
    /// The decoded value.
    public var value: Value
    /// The raw response: status, headers, body and URL.
    public var response: Response

    /// Creates a decoded response.
    /// - Parameters:
    ///   - value: The decoded value.
    ///   - response: The raw response.
    public init(value: Value, response: Response) {
        self.value = value
        self.response = response
    }
}

extension DecodedResponse: Sendable where Value: Sendable {}

extension Executor {
    /// Sends a resource's request and decodes the response.
    ///
    /// The request is validated first; an invalid one is never sent. Task cancellation cancels
    /// the request.
    /// - Parameter resource: What to fetch and how to decode it.
    /// - Returns: The decoded value.
    /// - Throws: ``CourierError``, whose ``CourierError/cause`` tells what went wrong.
    public func send<Value>(_ resource: Resource<Value>) async throws(CourierError) -> Value {
        let response = try await send(resource.request)
        // A large body is decoded away from an I/O executor the task prefers (see there).
        if response.body.count >= Resource<Value>.largeBody { return try await resource.decodeAwayFromIO(response) }
        return try resource.decode(response)
    }

    /// Sends a resource's request and returns the decoded value with the response's status,
    /// headers and URL.
    /// - Parameter resource: What to fetch and how to decode it.
    /// - Returns: The value and the response.
    /// - Throws: ``CourierError``.
    public func response<Value>(for resource: Resource<Value>) async throws(CourierError) -> DecodedResponse<Value> {
        let response = try await send(resource.request)
        if response.body.count >= Resource<Value>.largeBody {
            return DecodedResponse(value: try await resource.decodeAwayFromIO(response), response: response)
        }
        return DecodedResponse(value: try resource.decode(response), response: response)
    }

    /// Sends a request and returns the raw response, whatever its status.
    /// - Parameter request: The request.
    /// - Returns: The response.
    /// - Throws: ``CourierError`` for an invalid request, a transport failure, a timeout or
    ///   cancellation; never for a status.
    public func send(_ request: Request) async throws(CourierError) -> Response {
        try request.validate()
        if Task.isCancelled { throw CourierError(.cancelled, request: request) }
        // The exchange's errors arrive mapped, with the request: nothing to map here.
        guard let deadline = request.effectiveDeadline else { return try await buffered(request) }
        return try await withDeadline(.seconds(deadline), request: request) { () async throws(CourierError) in try await buffered(request) }
    }

    /// The response with its whole body: in hand when the transport gathered it, read from the
    /// stream otherwise.
    private func buffered(_ request: Request) async throws(CourierError) -> Response {
        let response = try await exchange.execute(request, options: StreamOptions.buffered.validated)
        do {
            return try await response.collect(upTo: .max)
        } catch {
            // A failure of the body as it arrives (cut short, too large) names the call.
            throw error.about(request)
        }
    }
}

/// Runs `operation`, cancelling it and throwing ``CourierError/Cause/timedOut`` if it has not
/// finished within `limit`.
package func withDeadline<Value: Sendable>(
    _ limit: Duration, request: Request, clock: ContinuousClock = ContinuousClock(),
    _ operation: @escaping @Sendable () async throws(CourierError) -> Value
) async throws(CourierError) -> Value {
    do {
        return try await withThrowingTaskGroup(of: Value?.self) { group in
            group.addTask { try await operation() }
            group.addTask {
                try await clock.sleep(for: limit)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next() else { throw CancellationError() }
            guard let value = first else { throw CourierError.timedOut(.init(.deadline, limit: limit), request: request) }
            return value
        }
    } catch let error as CourierError {
        throw error
    } catch {
        // The deadline's own sleep, stopped because the caller was cancelled.
        throw CourierError(.cancelled, request: request)
    }
}
