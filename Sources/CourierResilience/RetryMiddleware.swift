import CourierCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif


/// When and how often to retry.
public struct RetryPolicy: Sendable, Hashable {
    /// The most attempts in all, the first included; `1` never retries.
    public var maxAttempts: Int
    /// The backoff before the first retry; it doubles each time, up to ``maxDelay``.
    public var baseDelay: Duration
    /// The longest wait between attempts, also the cap on `Retry-After`.
    public var maxDelay: Duration
    /// The total time from the first attempt after which no retry starts; `nil` for none.
    public var deadline: Duration?
    /// The statuses that cause a retry.
    public var retryableStatuses: Set<Int>
    /// Whether transient transport failures (timeouts, refused or lost connections, DNS) cause a
    /// retry.
    public var retriesTransportFailures: Bool
    /// The longest one attempt may wait for its response head; `nil` (the default) for no limit
    /// but the request's own. An attempt that runs out is stopped and counts as
    /// ``CourierError/Cause/timedOut`` (so it is retried while attempts and the deadline allow):
    /// each retry gets its own time, where the request's ``Request/timeout`` (idle time, per
    /// hop) and ``Request/deadline`` (the whole call, retries included) do not.
    ///
    /// ```swift
    /// var policy = RetryPolicy(maxAttempts: 3, deadline: .seconds(5))
    /// policy.attemptTimeout = .seconds(1)    // three tries of at most 1 s each, 5 s in all
    /// ```
    public var attemptTimeout: Duration? {
        get { attemptLimit }
        set { attemptLimit = newValue.map { Swift.min(Swift.max($0, .zero), .seconds(Request.maximumInterval)) } }
    }
    private var attemptLimit: Duration?

    /// Creates a policy.
    /// - Parameters:
    ///   - maxAttempts: The most attempts in all; 3 by default.
    ///   - baseDelay: The first backoff; 0.5 s by default.
    ///   - maxDelay: The longest wait; 30 s by default.
    ///   - deadline: The total time after which no retry starts; 60 s by default.
    ///   - retryableStatuses: 408, 429, 500, 502, 503 and 504 by default.
    ///   - retriesTransportFailures: Whether transient transport failures are retried; `true` by default.
    public init(
        maxAttempts: Int = 3, baseDelay: Duration = .milliseconds(500), maxDelay: Duration = .seconds(30),
        deadline: Duration? = .seconds(60), retryableStatuses: Set<Int> = [408, 429, 500, 502, 503, 504],
        retriesTransportFailures: Bool = true
    ) {
        self.maxAttempts = max(1, maxAttempts)
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.deadline = deadline
        self.retryableStatuses = retryableStatuses
        self.retriesTransportFailures = retriesTransportFailures
    }

    /// The exponential backoff ceiling before retry number `retry` (1 for the first retry):
    /// `baseDelay × 2^(retry-1)`, capped at ``maxDelay``.
    public func backoffCeiling(beforeRetry retry: Int) -> Duration {
        let factor = Double(1 << min(max(retry - 1, 0), 30))
        // Clamped so that no configuration can make a wait that overflows a clock.
        let seconds = min(baseDelay.seconds * factor, maxDelay.seconds, Request.maximumInterval)
        return .seconds(max(0, seconds))
    }
}

/// Retries failed requests with exponential backoff and full jitter.
///
/// A request is retried when its response status is in ``RetryPolicy/retryableStatuses`` or the
/// transport failed transiently, only if it is retryable (idempotent methods, or opted in with
/// ``retryable(_:)``), while attempts remain and the policy's deadline allows. The wait before
/// retry *n* is a random duration between zero and `baseDelay × 2^(n-1)` (capped at
/// ``RetryPolicy/maxDelay``), unless the server sent `Retry-After` (seconds or an HTTP date): that
/// wait is used as it is when it is within `maxDelay`, and ends the retries when it is longer.
/// Garbage or negative `Retry-After` values are ignored; a wait that would pass the deadline ends
/// the retries. Cancellation is never retried and ends a backoff at once. Bodies are bytes in
/// memory, so every retry replays the same body.
///
/// When retries run out, the last response is returned (so decoding reports its status) or the
/// last error thrown. With a ``RetryBudget`` (``init(policy:budget:clock:random:now:)``), a retry
/// is also made only while the origin's budget allows it.
///
/// ```swift
/// let retry: RetryMiddleware = RetryMiddleware(policy: RetryPolicy(maxAttempts: 4, deadline: .seconds(20)))
/// let api = URLSessionExecutor().with(retry)
///
/// // In a test: the backoff waits on a clock the test moves, the jitter is seeded.
/// let clock = ManualClock()
/// let flaky = InMemoryExecutor.scripted([.status(503)], then: .status(200))
///     .with(RetryMiddleware(clock: clock, random: .seeded(7)))
/// let call = Task { try await flaky.send(.get |> url("https://api.test/health")) }
/// try await clock.waitForSleepers(1)
/// clock.advance(by: .seconds(1))
/// let status = try await call.value.status   // 200, on the second attempt
/// ```
public struct RetryMiddleware: Middleware {
    /// The policy.
    public let policy: RetryPolicy
    /// The budget retries are taken from, shared with whoever else holds it; `nil` for none.
    public let budget: RetryBudget?
    private let clock: ElapsedClock
    private let random: RandomSource
    private let wallClock: @Sendable () -> Date

    /// Creates the middleware.
    /// - Parameters:
    ///   - policy: When and how often to retry.
    ///   - clock: The clock for waits and the deadline: `ContinuousClock` by default, a
    ///     ``ManualClock`` in tests.
    ///   - random: The jitter source; inject ``RandomSource/seeded(_:)`` in tests.
    ///   - now: The wall-clock time, for `Retry-After` dates.
    public init(
        policy: RetryPolicy = RetryPolicy(), clock: some Clock<Duration> = ContinuousClock(), random: RandomSource = .system,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.init(policy: policy, budget: nil, clock: clock, random: random, now: now)
    }

    /// Creates the middleware with a retry budget: a retry is made only when the budget of the
    /// request's origin allows it (see ``RetryBudget``); otherwise the call ends with its last
    /// response or error, as when the attempts run out.
    /// - Parameters:
    ///   - policy: When and how often to retry.
    ///   - budget: The budget retries are taken from; share one across the executors that call
    ///     the same services.
    ///   - clock: The clock for waits and the deadline: `ContinuousClock` by default, a
    ///     ``ManualClock`` in tests.
    ///   - random: The jitter source; inject ``RandomSource/seeded(_:)`` in tests.
    ///   - now: The wall-clock time, for `Retry-After` dates.
    public init(
        policy: RetryPolicy = RetryPolicy(), budget: RetryBudget?, clock: some Clock<Duration> = ContinuousClock(),
        random: RandomSource = .system, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.policy = policy
        self.budget = budget
        self.clock = ElapsedClock(clock)
        self.random = random
        self.wallClock = now
    }

    /// Sends the request, retrying as the policy allows.
    /// - Parameters:
    ///   - request: The request.
    ///   - next: The rest of the chain.
    /// - Returns: The first acceptable response, or the last one.
    /// - Throws: The last error, or `CancellationError`.
    public func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
        guard let budget else { return try await send(request, next: next) }
        budget.recordCall(request)
        return try await RetryBudget.$recordedCall.withValue(ObjectIdentifier(budget)) { try await send(request, next: next) }
    }

    private func send(_ request: Request, next: Next) async throws -> StreamedResponse {
        let start = clock.now
        var attempt = 1
        while true {
            let outcome: Result<StreamedResponse, any Error>
            do {
                outcome = .success(try await Exchange.$currentAttempt.withValue(attempt) { try await self.attempt(request, next: next) })
            } catch {
                outcome = .failure(error)
            }
            guard request.isRetryable, attempt < policy.maxAttempts, !Task.isCancelled,
                let wait = delayBeforeRetry(attempt, after: outcome)
            else { return try outcome.get() }
            if let deadline = policy.deadline, clock.now - start + wait > deadline {
                return try outcome.get()
            }
            // Last: a retry that will not be made takes nothing from the budget.
            if let budget, !budget.withdrawRetry(for: request) {
                ResilienceEvent.report(ResilienceEvent(.retryBudgetExhausted, origin: RetryBudget.origin(of: request)))
                return try outcome.get()
            }
            // The next attempt supersedes this response: stop its transfer now.
            try? outcome.get().body.cancel()
            try await clock.sleep(for: wait, as: .retryBackoff)
            attempt += 1
        }
    }

    /// One attempt, stopped when it runs past ``RetryPolicy/attemptTimeout``.
    private func attempt(_ request: Request, next: Next) async throws -> StreamedResponse {
        guard let limit = policy.attemptTimeout else { return try await next(request) }
        return try await AttemptTimeoutMiddleware(limit, elapsed: clock).intercept(request, next: next)
    }

    /// The wait before the next attempt, or `nil` when the outcome is not retryable.
    func delayBeforeRetry(_ attempt: Int, after outcome: Result<StreamedResponse, any Error>) -> Duration? {
        switch outcome {
        case .success(let response):
            guard policy.retryableStatuses.contains(response.status) else { return nil }
            if let retryAfter = RetryAfter.delay(response.headers[.retryAfter], now: wallClock()) {
                // Retrying sooner than the server asked would not help; a longer wait than the
                // policy allows ends the retries instead.
                return retryAfter <= policy.maxDelay && retryAfter <= .seconds(Request.maximumInterval) ? retryAfter : nil
            }
        case .failure(let error):
            guard policy.retriesTransportFailures, Self.isTransient(error) else { return nil }
        }
        let ceiling = policy.backoffCeiling(beforeRetry: attempt)
        return .seconds(ceiling.seconds * random.fraction())
    }

    private static func isTransient(_ error: any Error) -> Bool {
        if error is CancellationError { return false }
        let wrapped = CourierError.wrapping(error, request: nil)
        switch wrapped.cause {
        case .timedOut, .transport: return wrapped.isTransient
        default: return false
        }
    }
}

/// Parses `Retry-After` ([RFC 9110 §10.2.3](https://www.rfc-editor.org/rfc/rfc9110#section-10.2.3)).
enum RetryAfter {
    /// The delay a `Retry-After` value asks for: delay-seconds or an HTTP date; `nil` for a
    /// missing, malformed or negative value. A date in the past means no wait.
    static func delay(_ value: String?, now: Date) -> Duration? {
        guard let value = value.map(HTTPSyntax.trimmed), !value.isEmpty else { return nil }
        if value.allSatisfy(\.isASCII), value.allSatisfy(\.isNumber) {
            guard let seconds = Int64(value) else { return nil }
            return .seconds(seconds)
        }
        guard let date = HTTPDate.parse(value, now: now) else { return nil }
        return .seconds(max(0, date.timeIntervalSince(now)))
    }
}

extension RetryPolicy {
    /// The attempt the innermost ``RetryMiddleware`` of the current task is making: `1` for the
    /// first (and outside any retry middleware), `2` for the first retry, and so on. Middleware
    /// inside the retry (logging, metrics, tracing) reads it to tell attempts apart; a resend
    /// count is `currentAttempt - 1`. The same as ``Exchange/currentAttempt``, which
    /// the core's middleware read without linking this module.
    public static var currentAttempt: Int { Exchange.currentAttempt }
}
