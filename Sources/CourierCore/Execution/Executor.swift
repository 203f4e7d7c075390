import Foundation

/// Something that sends a ``Request`` and returns the response head with its body: the one
/// contract every transport implements.
///
/// `Executor` has exactly one requirement, ``execute(_:options:)``: send the request, return as
/// soon as the status and headers are in, with the body either already in hand
/// (``ByteStream/init(_:)``, ``ByteStream/bufferedData``) or still arriving (a live
/// ``ByteStream``). Everything else is built on it in extensions, in one place whatever the
/// transport: ``send(_:)-(Request)`` and ``send(_:)-(Resource<Value>)`` (validation, deadlines,
/// decoding), ``stream(_:options:)``, ``download(_:to:options:)``, the completion-handler forms,
/// pagination and ``Middleware`` (``with(_:)``).
///
/// Courier ships ``URLSessionExecutor`` (the network), ``CallbackExecutor`` (any
/// completion-handler transport), ``InMemoryExecutor`` (tests and offline demos) and
/// ``HARReplayExecutor`` (recorded traffic).
///
/// ```swift
/// struct Canned: Executor {
///     func execute(_ request: Request, options: StreamOptions) async throws -> StreamedResponse {
///         StreamedResponse(status: 200, body: ByteStream(Data("hello".utf8)))
///     }
/// }
/// ```
public protocol Executor: Sendable {
    /// Sends `request` and returns its response head as soon as it arrives, with the body in
    /// hand or still arriving.
    ///
    /// Implementations must not send a request with ``Request/problems`` (rendering it with
    /// ``Request/urlRequest()`` checks this), should stop promptly when the task is cancelled,
    /// and stop the transfer when the body stream is stopped or dropped. A transport that can
    /// gather a body faster than it can stream it may do so when
    /// ``StreamOptions/buffersBody`` says the caller will read it whole anyway.
    /// - Parameters:
    ///   - request: The request.
    ///   - options: How the body is delivered: buffer limits, upload progress, whether the
    ///     caller reads it whole.
    /// - Returns: The response head and its body, whatever the status.
    /// - Throws: A transport error before the head arrived (``send(_:)-(Request)`` maps it to
    ///   ``CourierError``); later failures are thrown by the body.
    func execute(_ request: Request, options: StreamOptions) async throws -> StreamedResponse
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
            guard let deadline = request.effectiveDeadline else { return try await buffered(request) }
            return try await withDeadline(.seconds(deadline), request: request) { try await buffered(request) }
        } catch {
            throw CourierError.wrapping(error, request: request)
        }
    }

    /// The response with its whole body: in hand when the transport gathered it, read from the
    /// stream otherwise.
    private func buffered(_ request: Request) async throws -> Response {
        try await settledResponse(to: request, options: .buffered).collect(upTo: .max)
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
