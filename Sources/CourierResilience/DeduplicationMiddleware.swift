import CourierCore

/// Lets identical `GET` (and `HEAD`) requests that are in flight at the same time share one
/// response. Opt-in: add it where repeated identical reads are common (a list screen opened
/// twice, several views asking for the same avatar).
///
/// Requests are identical when their ``Request`` values are equal: method, URL, headers
/// (credentials included, so different users never share), body and options. Every caller gets
/// the same response or the same error. Only bodies in hand are shared (a stream can be read
/// once): when the shared request's answer is a stream, it goes to the caller that sent it, and
/// each caller that waited sends its own. A waiting caller that is cancelled stops waiting at once;
/// if the caller that is sending the shared request is cancelled, the callers still waiting start
/// a new shared request.
public struct DeduplicationMiddleware: Middleware {
    private let flights = Locked<[Request: Flight]>([:])

    /// Creates the middleware.
    public init() {}

    /// The number of distinct requests in flight.
    public var inFlight: Int { flights.withLock { $0.count } }

    /// The number of callers waiting for an identical request that another caller is sending.
    public var waiting: Int { flights.withLock { $0.values.reduce(0) { $0 + $1.waiting } } }

    /// Sends the request, or joins an identical one already in flight.
    /// - Parameters:
    ///   - request: The request.
    ///   - next: The rest of the chain.
    /// - Returns: The (shared) response.
    /// - Throws: The shared error, or `CancellationError` when this caller is cancelled.
    public func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
        guard request.method == .get || request.method == .head else { return try await next(request) }
        let (flight, isLeader) = flights.withLock { flights -> (Flight, Bool) in
            if let existing = flights[request] { return (existing, false) }
            let flight = Flight()
            flights[request] = flight
            return (flight, true)
        }
        guard isLeader else {
            do {
                // A streamed answer went to the caller that sent it: send this one's own.
                guard let shared = try await flight.wait() else { return try await next(request) }
                return shared
            } catch where Self.isCancellation(error) && !Task.isCancelled {
                // The caller that was sending it went away; the callers still waiting start a
                // new shared request (one of them leads it).
                return try await intercept(request, next: next)
            }
        }
        let result: Result<StreamedResponse, any Error>
        do { result = .success(try await next(request)) } catch { result = .failure(error) }
        flights.withLock { flights in
            if flights[request] === flight { flights.removeValue(forKey: request) }
        }
        flight.finish(with: result.map { $0.body.bufferedData == nil ? nil : $0 })
        return try result.get()
    }

    private static func isCancellation(_ error: any Error) -> Bool {
        if error is CancellationError { return true }
        if case .cancelled = CourierError.wrapping(error, request: nil).cause { return true }
        return false
    }

    /// The callers waiting for one shared request.
    final class Flight: Sendable {
        private struct State {
            var result: Result<StreamedResponse?, any Error>?
            var waiters: [UInt64: CheckedContinuation<StreamedResponse?, any Error>] = [:]
            var nextID: UInt64 = 0
        }

        private let state = Locked(State())

        /// The callers waiting now.
        var waiting: Int { state.withLock { $0.waiters.count } }

        func finish(with result: Result<StreamedResponse?, any Error>) {
            let waiters = state.withLock { state -> [CheckedContinuation<StreamedResponse?, any Error>] in
                state.result = result
                defer { state.waiters.removeAll() }
                return Array(state.waiters.values)
            }
            for waiter in waiters { waiter.resume(with: result) }
        }

        func wait() async throws -> StreamedResponse? {
            let id = state.withLock { state -> UInt64 in
                state.nextID += 1
                return state.nextID
            }
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<StreamedResponse?, any Error>) in
                    let finished = state.withLock { state -> Result<StreamedResponse?, any Error>? in
                        if let result = state.result { return result }
                        // Cancelled before it got here: the handler below found no waiter to end.
                        if Task.isCancelled { return .failure(CancellationError()) }
                        state.waiters[id] = continuation
                        return nil
                    }
                    if let finished { continuation.resume(with: finished) }
                }
            } onCancel: {
                let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
                waiter?.resume(throwing: CancellationError())
            }
        }
    }
}
