import CourierCore

/// Lets at most a fixed number of requests through at once; the others wait their turn in
/// arrival order.
///
/// A waiting request that is cancelled leaves the queue at once with `CancellationError` and takes
/// no slot; one cancelled before it arrives takes none either and sends nothing. Share one instance between executors to limit them together.
///
/// ```swift
/// let executor = URLSessionExecutor().with(ConcurrencyLimitMiddleware(limit: 4))
/// ```
public struct ConcurrencyLimitMiddleware: Middleware {
    private let gate: Gate

    /// Creates the middleware.
    /// - Parameter limit: The most requests in flight at once; at least 1.
    public init(limit: Int) {
        gate = Gate(limit: max(1, limit))
    }

    /// The number of requests in flight now.
    public var inFlight: Int { gate.state.withLock { $0.inFlight } }

    /// The number of requests waiting for a slot.
    public var waiting: Int { gate.state.withLock { $0.waiters.count } }

    /// Waits for a slot, sends the request, and frees the slot when the body is in: at once for
    /// a body in hand, at the end of a streamed body (read to the end, failed, cancelled or
    /// dropped), not when its head arrives.
    /// - Parameters:
    ///   - request: The request.
    ///   - next: The rest of the chain.
    /// - Returns: The response.
    /// - Throws: `CancellationError` when cancelled before or while waiting, or whatever `next`
    ///   throws.
    public func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
        try await gate.acquire()
        let streamed: StreamedResponse
        do {
            streamed = try await next(request)
        } catch {
            gate.release()
            throw error
        }
        guard streamed.body.bufferedData == nil else {
            gate.release()
            return streamed
        }
        var held = streamed
        let gate = self.gate
        held.body = streamed.body.observing(chunk: { _ in }, end: { _ in gate.release() })
        return held
    }

    /// A FIFO counting semaphore whose waiters can be cancelled.
    final class Gate: Sendable {
        struct Waiter {
            var id: UInt64
            var continuation: CheckedContinuation<Void, any Error>
        }

        struct State {
            var limit: Int
            var inFlight = 0
            var nextID: UInt64 = 0
            var waiters: [Waiter] = []
        }

        let state: Locked<State>

        init(limit: Int) { state = Locked(State(limit: limit)) }

        func acquire() async throws {
            let id = state.withLock { state -> UInt64 in
                state.nextID += 1
                return state.nextID
            }
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    // A task cancelled before it got here found no waiter to end in the handler
                    // below: it leaves now, without a slot, under the lock the handler takes too.
                    let outcome = state.withLock { state -> Result<Void, any Error>? in
                        if Task.isCancelled { return .failure(CancellationError()) }
                        if state.inFlight < state.limit && state.waiters.isEmpty {
                            state.inFlight += 1
                            return .success(())
                        }
                        state.waiters.append(Waiter(id: id, continuation: continuation))
                        return nil
                    }
                    if let outcome { continuation.resume(with: outcome) }
                }
            } onCancel: {
                let removed = state.withLock { state -> Waiter? in
                    guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                    return state.waiters.remove(at: index)
                }
                removed?.continuation.resume(throwing: CancellationError())
            }
        }

        func release() {
            let next = state.withLock { state -> Waiter? in
                if state.waiters.isEmpty {
                    state.inFlight -= 1
                    return nil
                }
                // The slot passes straight to the first waiter.
                return state.waiters.removeFirst()
            }
            next?.continuation.resume()
        }
    }
}
