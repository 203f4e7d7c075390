import CourierCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The resilience middleware in the order that works: retries with a budget, server pacing,
/// hedging, a circuit breaker and a per-attempt timeout, each optional and each usable alone.
///
/// Outermost first:
/// 1. ``RetryMiddleware`` with a ``RetryBudget`` and the policy's total ``RetryPolicy/deadline``:
///    it sees the outcome of everything inside, so every attempt below is paced, hedged, guarded
///    by the breaker and timed.
/// 2. ``ServerPacing``: every attempt waits for the origin's announced rate limit, and every
///    response teaches it the limit.
/// 3. ``HedgingMiddleware`` (off unless asked for): hedges share the retry budget.
/// 4. ``CircuitBreaker``: counts each attempt (a hedge is one), and fails fast, before a
///    connection is even asked for.
/// 5. ``AttemptTimeoutMiddleware``: innermost, so that the breaker counts a slow attempt as the
///    timeout it is and the retry makes another.
///
/// Put observers (``LoggingMiddleware``, and in the integrations `MetricsMiddleware` and
/// `TracingMiddleware`) outside it to hear every ``ResilienceEvent``, and a
/// ``ConcurrencyLimitMiddleware`` outside that to bound the calls in flight:
///
/// ```swift
/// let stack = ResilienceStack.server()
/// let api = InMemoryExecutor.scripted([], then: .status(200))
///     .with(resilience: stack)
///     .with(LoggingMiddleware { event in print(event) })   // outermost
/// ```
public struct ResilienceStack: Sendable {
    /// Retries, outermost; `nil` for none.
    public var retry: RetryMiddleware?
    /// Server pacing; `nil` for none.
    public var pacing: ServerPacing?
    /// Hedging; `nil` for none.
    public var hedging: HedgingMiddleware?
    /// The circuit breaker; `nil` for none.
    public var breaker: CircuitBreaker?
    /// The per-attempt timeout, innermost; `nil` for none.
    public var attemptTimeout: AttemptTimeoutMiddleware?

    /// Creates a stack of the pieces given, in the documented order.
    /// - Parameters:
    ///   - retry: Retries, with their budget.
    ///   - pacing: Server pacing.
    ///   - hedging: Hedging.
    ///   - breaker: The circuit breaker.
    ///   - attemptTimeout: The per-attempt timeout.
    public init(
        retry: RetryMiddleware? = nil, pacing: ServerPacing? = nil, hedging: HedgingMiddleware? = nil, breaker: CircuitBreaker? = nil,
        attemptTimeout: AttemptTimeoutMiddleware? = nil
    ) {
        self.retry = retry
        self.pacing = pacing
        self.hedging = hedging
        self.breaker = breaker
        self.attemptTimeout = attemptTimeout
    }

    /// The pieces present, outermost first.
    public var middleware: [any Middleware] {
        var list: [any Middleware] = []
        if let retry { list.append(retry) }
        if let pacing { list.append(pacing) }
        if let hedging { list.append(hedging) }
        if let breaker { list.append(breaker) }
        if let attemptTimeout { list.append(attemptTimeout) }
        return list
    }

    /// The stack for a service calling another service: up to `attempts` attempts of at most
    /// `attemptTimeout` each, none started after `deadline`, retries held to 20% of recent calls
    /// per origin, pacing that waits at most 5 s for a rate limit, a breaker that opens when half
    /// of at least 20 calls in 30 s failed and tries again after 15 s, and hedging only when
    /// `hedgeAfter` is given.
    /// - Parameters:
    ///   - attempts: The most attempts per call; 3 by default.
    ///   - attemptTimeout: The longest one attempt waits for its head; 5 s by default.
    ///   - deadline: No retry starts after this; 20 s by default.
    ///   - hedgeAfter: When to hedge an idempotent call; `nil` (the default) for never.
    ///   - budget: The retry budget, shared with other stacks calling the same services; a new
    ///     one by default.
    ///   - clock: The clock every piece runs on: a ``ManualClock`` in tests.
    /// - Returns: The stack.
    public static func server(
        attempts: Int = 3, attemptTimeout: Duration = .seconds(5), deadline: Duration = .seconds(20),
        hedgeAfter: HedgingMiddleware.Delay? = nil, budget: RetryBudget? = nil, clock: some Clock<Duration> = ContinuousClock()
    ) -> ResilienceStack {
        let budget = budget ?? RetryBudget(clock: clock)
        let policy = RetryPolicy(maxAttempts: attempts, baseDelay: .milliseconds(100), maxDelay: .seconds(5), deadline: deadline)
        let breaker = CircuitBreaker.Policy(failureRatio: 0.5, minimumCalls: 20, window: .seconds(30), breakDuration: .seconds(15))
        return ResilienceStack(
            retry: RetryMiddleware(policy: policy, budget: budget, clock: clock),
            pacing: ServerPacing(maximumWait: .seconds(5), clock: clock),
            hedging: hedgeAfter.map { HedgingMiddleware(maxAttempts: 2, delay: $0, budget: budget, clock: clock) },
            breaker: CircuitBreaker(policy: breaker, clock: clock),
            attemptTimeout: AttemptTimeoutMiddleware(attemptTimeout, clock: clock))
    }
}

extension Executor {
    /// The same executor with a resilience stack outside its middleware so far (add observers
    /// after it, so that they are outside it).
    /// - Parameter stack: The stack.
    /// - Returns: The executor.
    public func with(resilience stack: ResilienceStack) -> Self {
        var copy = self
        copy.exchange.middleware.insert(contentsOf: stack.middleware, at: 0)
        return copy
    }
}
