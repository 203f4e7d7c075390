import Foundation

/// Something that sends a ``Request`` and returns the raw ``Response``.
///
/// `Executor` has one requirement; everything else (``send(_:)-(Resource<Value>)``, status
/// validation, decoding, completion handlers, middleware) is built on it in extensions, so
/// validation and decoding live in exactly one place whatever the transport.
///
/// Courier ships ``URLSessionExecutor`` (the network), ``CallbackExecutor`` (any
/// completion-handler transport) and ``InMemoryExecutor`` (tests and offline demos). Wrap any of
/// them with ``Middleware`` using ``with(_:)``.
public protocol Executor: Sendable {
    /// Sends `request` and returns the response, whatever its status.
    ///
    /// Implementations must not send a request with ``Request/problems`` (rendering it with
    /// ``Request/urlRequest()`` checks this) and should end promptly when the task is cancelled.
    /// - Parameter request: The request.
    /// - Returns: The response.
    /// - Throws: A transport error; ``send(_:)-(Request)`` maps it to ``CourierError``.
    func execute(_ request: Request) async throws -> Response

    /// Sends `request` and returns as soon as the status and headers are in, with the body still
    /// arriving; see ``stream(_:options:)``.
    ///
    /// The default implementation calls ``execute(_:)`` and hands the buffered body over as one
    /// chunk, so every executor can stream; executors that can do better (``URLSessionExecutor``,
    /// ``InMemoryExecutor``, ``HARReplayExecutor``, ``MiddlewareExecutor``) implement it.
    /// - Parameters:
    ///   - request: The request.
    ///   - options: The buffer limit and progress reporting.
    /// - Returns: The response head and its body stream.
    /// - Throws: A transport error before the head arrived; later failures are thrown by the body.
    func executeStream(_ request: Request, options: StreamOptions) async throws -> StreamedResponse
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
        return try resource.decode(response)
    }

    /// Sends a resource's request and returns the decoded value with the response's status,
    /// headers and URL.
    /// - Parameter resource: What to fetch and how to decode it.
    /// - Returns: The value and the response.
    /// - Throws: ``CourierError``.
    public func response<Value>(for resource: Resource<Value>) async throws(CourierError) -> DecodedResponse<Value> {
        let response = try await send(resource.request)
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
        do {
            guard let deadline = request.effectiveDeadline else { return try await execute(request) }
            return try await withDeadline(.seconds(deadline), request: request) { try await execute(request) }
        } catch {
            throw CourierError.wrapping(error, request: request)
        }
    }
}

/// Runs `operation`, cancelling it and throwing ``CourierError/Cause/timedOut`` if it has not
/// finished within `limit`.
func withDeadline<Value: Sendable>(
    _ limit: Duration, request: Request, clock: ContinuousClock = ContinuousClock(),
    _ operation: @escaping @Sendable () async throws -> Value
) async throws -> Value {
    try await withThrowingTaskGroup(of: Value?.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await clock.sleep(for: limit)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next() else { throw CancellationError() }
        guard let value = first else { throw CourierError(.timedOut, request: request) }
        return value
    }
}
