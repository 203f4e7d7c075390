/// A whole HTTP call over a ``Transport``: every hop of its redirect chain, each decided by one
/// ``RedirectPolicy``, with per-hop middleware around each hop. Written once, here, for every
/// transport.
///
/// **What happens to a request, in order.**
/// 1. Per-call middleware (``Executor/with(_:)`` on the exchange) sees the request once: retries,
///    auth refresh, logging of the call.
/// 2. The exchange sends the first hop: the request as the per-call middleware left it.
/// 3. Each hop runs through ``hopMiddleware`` (outermost first), then the transport. A hop
///    middleware sees the request of that hop exactly as it goes out, after the redirect policy
///    changed it (method, body, and credentials dropped once the chain left the origin), and the
///    hop's own response, redirects included.
/// 4. Each hop's head is settled (a status below 200 is a ``TransportFailure/Kind/badResponse``;
///    a body that is complete when the head arrives is handed on in hand).
/// 5. A redirect the policy follows has its body drained (up to 64 KiB, so a connection can be
///    reused; a longer one is cut) and the next hop is sent; a refused one fails with
///    ``TransportFailure/Kind/redirectFailed``; any other response ends the call.
/// 6. An error before the head is a ``CourierError`` with the caller's request attached
///    (redacted).
///
/// ``URLSessionExecutor`` is an exchange over ``URLSessionTransport``; ``InMemoryExecutor`` is a
/// transport too, so `Exchange(transport: stubs)` follows stubbed redirects as the network does.
///
/// ```swift
/// let executor = URLSessionExecutor()
///     .eachHop(HopRecorder())        // every hop, redirects included
///     .with(LoggingMiddleware())     // once per call
/// ```
public struct Exchange: Executor {
    /// Sends each hop.
    public var transport: any Transport
    /// How redirects are followed.
    public var redirects: RedirectPolicy
    /// Middleware run around every hop, outermost first; see the order above.
    public var hopMiddleware: [any Middleware]

    /// Creates an exchange.
    /// - Parameters:
    ///   - transport: Sends each hop.
    ///   - redirects: How redirects are followed; ``RedirectPolicy/follow`` by default.
    ///   - hopMiddleware: Middleware around every hop, outermost first.
    public init(transport: any Transport, redirects: RedirectPolicy = .follow, hopMiddleware: [any Middleware] = []) {
        self.transport = transport
        self.redirects = redirects
        self.hopMiddleware = hopMiddleware
    }

    /// This exchange with `middleware` added around every hop, inside the middleware it has.
    /// - Parameter middleware: The middleware, outermost first.
    /// - Returns: The exchange; it shares the transport.
    public func eachHop(_ middleware: any Middleware...) -> Exchange {
        var copy = self
        copy.hopMiddleware += middleware
        return copy
    }

    /// Sends `request` and every redirect the policy follows; returns the last hop's response.
    /// - Parameters:
    ///   - request: The request.
    ///   - options: How the body is delivered; handed to every hop.
    /// - Returns: The head and body of the response that ends the call.
    /// - Throws: ``CourierError``, with `request` attached.
    public func execute(_ request: Request, options: StreamOptions) async throws -> StreamedResponse {
        // Made at the first redirect: most calls have none.
        var chain: RedirectPolicy.Chain?
        while true {
            let hop = chain?.current ?? request
            let response: StreamedResponse
            do {
                response = try await send(hop, from: 0, options: options)
            } catch {
                throw CourierError.wrapping(error, request: request)
            }
            guard redirects.follows, RedirectPolicy.isRedirect(response.status) else { return response }
            var state = chain ?? RedirectPolicy.Chain(request)
            switch redirects.next(status: response.status, location: response.headers[.location], chain: &state) {
            case .deliver:
                return response
            case .fail(let failure):
                response.body.cancel()
                throw CourierError(.transport(failure), request: request)
            case .follow:
                chain = state
                await response.body.drain(upTo: 64 << 10)
                if Task.isCancelled { throw CourierError(.cancelled, request: request) }
            }
        }
    }

    /// One hop through the hop middleware from `index` on, then the transport.
    private func send(_ hop: Request, from index: Int, options: StreamOptions) async throws -> StreamedResponse {
        guard index < hopMiddleware.count else {
            return try await transport.send(hop: hop, options: options).settledIfNeeded(answering: hop.method)
        }
        return try await hopMiddleware[index].intercept(hop) { hop in
            try await self.send(hop, from: index + 1, options: options)
        }
    }
}

extension ByteStream {
    /// Reads and drops the body, up to `limit` bytes; a longer one is cut (stopping its
    /// transfer). Errors end the draining: nothing waits for this body.
    func drain(upTo limit: Int) async {
        guard bufferedData == nil else { return }
        var read = 0
        var iterator = makeAsyncIterator()
        do {
            while let chunk = try await iterator.next() {
                read += chunk.count
                if read > limit { break }
            }
        } catch {
            return
        }
        if read > limit { cancel() }
    }
}
