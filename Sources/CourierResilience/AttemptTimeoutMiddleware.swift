import CourierCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Stops an attempt that has not received its response head within a time limit, and fails it
/// as ``CourierError/Cause/timedOut`` (transient: a ``RetryMiddleware`` outside retries it, a
/// ``CircuitBreaker`` outside counts it as a failure).
///
/// ``RetryPolicy/attemptTimeout`` does the same around each of the retry's attempts. Wherever the
/// limit is configured, every piece inside the attempt reads the attempt that ran out of time as
/// the timeout it is, not as a cancellation: a ``CircuitBreaker`` inside counts it, a logger
/// logs a timeout. Put it innermost, as ``ResilienceStack`` does:
///
/// ```swift
/// let api = InMemoryExecutor.scripted([], then: .status(200))
///     .with(RetryMiddleware(), CircuitBreaker(), AttemptTimeoutMiddleware(.seconds(2)))
/// ```
///
/// The limit covers the head only: a body streamed after it is governed by the request's own
/// ``Request/timeout`` (idle time) and ``Request/deadline``.
public struct AttemptTimeoutMiddleware: Middleware {
    /// The longest an attempt may wait for its response head (0 to a year; values outside are
    /// clamped).
    public let limit: Duration
    private let clock: ElapsedClock

    /// Creates the middleware.
    /// - Parameters:
    ///   - limit: The longest an attempt may wait for its response head.
    ///   - clock: The clock the limit runs on: `ContinuousClock` by default, a ``ManualClock``
    ///     in tests.
    public init(_ limit: Duration, clock: some Clock<Duration> = ContinuousClock()) {
        self.limit = Self.clamped(limit)
        self.clock = ElapsedClock(clock)
    }

    init(_ limit: Duration, elapsed clock: ElapsedClock) {
        self.limit = Self.clamped(limit)
        self.clock = clock
    }

    package static func clamped(_ limit: Duration) -> Duration {
        Swift.min(Swift.max(limit, .zero), .seconds(Request.maximumInterval))
    }

    /// Sends the request, failing it as a timeout when its head is later than ``limit``.
    /// - Parameters:
    ///   - request: The request.
    ///   - next: The rest of the chain.
    /// - Returns: The response.
    /// - Throws: ``CourierError/Cause/timedOut`` when the limit passed, or what the chain throws.
    public func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
        let clock = self.clock
        let limit = self.limit
        let expiry = AttemptExpiry(limit: limit, outer: AttemptExpiry.current)
        // The group ends (its tasks awaited) before this function returns: `next` does not escape.
        return try await withoutActuallyEscaping(next) { next in
            try await withThrowingTaskGroup(of: StreamedResponse?.self) { group in
                group.addTask { try await AttemptExpiry.$current.withValue(expiry) { try await next(request) } }
                group.addTask {
                    try await clock.sleep(for: limit, as: .attemptTimeout)
                    return nil
                }
                defer { group.cancelAll() }
                guard let first = try await group.next() else { throw CancellationError() }
                // Out of time: the attempt is marked expired, so that every piece inside it reads
                // the cancellation that stops it as this timeout (`CourierError.wrapping`), then
                // cancelled.
                guard let response = first else {
                    expiry.expire()
                    // An answer that lands as the limit passes is dropped: stop its transfer.
                    group.cancelAll()
                    while let late = try? await group.next() { late?.body.cancel() }
                    throw CourierError.timedOut(.init(.attempt, limit: limit), request: request)
                }
                return response
            }
        }
    }
}
