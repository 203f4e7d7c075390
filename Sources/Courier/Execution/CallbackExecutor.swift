import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Adapts any completion-handler transport to ``Executor``.
///
/// The transport receives each (already validated) request and a completion to call once with the
/// response or an error, and returns an action that cancels the work. Cancelling the calling task
/// runs that action and ends the call at once with ``CourierError/Cause/cancelled``; a completion
/// that arrives later is ignored.
///
/// ```swift
/// let executor = CallbackExecutor { request, complete in
///     legacyClient.load(request) { result in complete(result) }
///     return { legacyClient.cancelAll() }
/// }
/// ```
public struct CallbackExecutor: Executor {
    /// Called with the result of a transport; call it exactly once.
    public typealias Completion = @Sendable (Result<Response, any Error>) -> Void
    /// Starts sending a request and returns an action that cancels it.
    public typealias Transport = @Sendable (Request, @escaping Completion) -> @Sendable () -> Void

    private let transport: Transport

    /// Creates an executor from a completion-handler transport.
    /// - Parameter transport: Starts a request, calls the completion once, returns a cancel action.
    public init(_ transport: @escaping Transport) {
        self.transport = transport
    }

    /// Sends `request` through the transport; the body comes back in hand.
    /// - Parameters:
    ///   - request: The request.
    ///   - options: Unused: a completion-handler transport delivers the body whole.
    /// - Returns: The response.
    /// - Throws: ``CourierError`` for an invalid request, the transport's error, or
    ///   `CancellationError`.
    public func execute(_ request: Request, options: StreamOptions) async throws -> StreamedResponse {
        try request.validate()
        let transport = self.transport
        return StreamedResponse(try await withCallback { complete in transport(request, complete) })
    }

    /// An executor over `URLSession.dataTask(with:completionHandler:)`.
    /// - Parameter session: The session; `URLSession.shared` by default.
    /// - Returns: The executor.
    public static func dataTask(session: URLSession = .shared) -> CallbackExecutor {
        CallbackExecutor { request, complete in
            let urlRequest: URLRequest
            do {
                urlRequest = try request.urlRequest()
            } catch {
                complete(.failure(error))
                return {}
            }
            let task = session.dataTask(with: urlRequest) { data, response, error in
                complete(URLSessionExecutor.result(data: data, response: response, error: error))
            }
            task.resume()
            return { task.cancel() }
        }
    }
}
