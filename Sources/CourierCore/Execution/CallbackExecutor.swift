#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Adapts any completion-handler transport to ``Executor``, through the same ``Exchange`` as
/// every other transport: a `3xx` it hands back is followed under the ``RedirectPolicy``, the
/// body is held to the framing check, and the request's ``Request/timeout`` runs as the
/// exchange's idle timer.
///
/// The transport receives each (already validated) request and a completion to call once with the
/// response or an error, and returns an action that cancels the work. Cancelling the calling task
/// runs that action and ends the call at once with ``CourierError/Cause/cancelled``; a completion
/// that arrives later is ignored. A transport that follows redirects itself hands back only the
/// last response: the exchange cannot see the hops it did not send.
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
    public typealias Start = @Sendable (Request, @escaping Completion) -> @Sendable () -> Void

    /// The exchange every call runs through, over the completion-handler transport.
    public var exchange: Exchange

    /// Creates an executor from a completion-handler transport.
    /// - Parameters:
    ///   - redirects: How a `3xx` the transport hands back is followed; ``RedirectPolicy/follow``
    ///     by default.
    ///   - maximumResponseSize: The most bytes a response body may have; `nil` (the default)
    ///     sets no limit.
    ///   - start: Starts a request, calls the completion once, returns a cancel action.
    public init(redirects: RedirectPolicy = .follow, maximumResponseSize: Int? = nil, _ start: @escaping Start) {
        exchange = Exchange(transport: Hop(start: start), redirects: redirects, maximumResponseSize: maximumResponseSize)
    }

    /// One hop through a completion-handler transport.
    private struct Hop: Transport {
        let start: CallbackExecutor.Start

        func send(hop request: Request, options: StreamOptions) async throws -> StreamedResponse {
            if !options.hopIsValid { try request.validate() }
            let start = self.start
            return StreamedResponse(try await withCallback { complete in start(request, complete) })
        }
    }
}
