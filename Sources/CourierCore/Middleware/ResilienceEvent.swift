#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Something a resilience middleware decided: a circuit breaker changed state or refused a call,
/// a retry budget refused a retry, a hedge was sent or won, a call waited for a server's rate
/// limit, a fault was injected.
///
/// Events go to every observer in scope of the task that made the decision:
/// ``LoggingMiddleware``, and in the integrations `MetricsMiddleware` and `TracingMiddleware`,
/// observe the middleware inside them, so put them outside the resilience middleware (as
/// ``ResilienceStack`` does) to hear from all of it. Observe them yourself with
/// ``observing(_:operation:isolation:)``:
///
/// ```swift
/// let breaker = CircuitBreaker()
/// let api = InMemoryExecutor.scripted([], then: .status(200)).with(breaker)
/// let response = try await ResilienceEvent.observing({ event in print(event) }) {
///     try await api.send(.get |> url("https://api.test/health"))
/// }
/// ```
///
/// An event names the origin (scheme, host and port) and never a path, query or header.
public struct ResilienceEvent: Sendable, Hashable, CustomStringConvertible {
    /// What happened.
    #if hasAttribute(nonexhaustive)
        @nonexhaustive
    #endif
    public enum Kind: String, Sendable, Hashable {
        /// A circuit breaker opened: calls to the origin fail at once.
        case circuitOpened = "circuit_opened"
        /// A circuit breaker's break ended: trial calls go through.
        case circuitHalfOpened = "circuit_half_opened"
        /// A circuit breaker closed: calls go through again.
        case circuitClosed = "circuit_closed"
        /// A circuit breaker refused a call (``CourierError/Cause/circuitOpen(_:)``); ``delay``
        /// is the time until it lets a trial through, when known.
        case circuitRejected = "circuit_rejected"
        /// A retry was not made because the origin's ``RetryBudget`` was spent.
        case retryBudgetExhausted = "retry_budget_exhausted"
        /// A hedged attempt was sent (``attempt`` says which; ``delay``, after how long).
        case hedgeSent = "hedge_sent"
        /// A hedged attempt answered first (``attempt`` says which: `1` is the original).
        case hedgeWon = "hedge_won"
        /// A call waited (``delay``) for the origin's rate limit before it was sent.
        case paced
        /// A call failed at once (``CourierError/Cause/rateLimited(_:)``): the origin's rate
        /// limit would have kept it waiting longer than allowed; ``delay`` is that wait.
        case rateLimited = "rate_limited"
        /// A ``FaultInjection`` rule changed the call (``detail`` says how).
        case faultInjected = "fault_injected"
    }

    /// What happened.
    public var kind: Kind
    /// The origin: `https://api.example.com:443`.
    public var origin: String
    /// How long: a pacing wait, a hedge's delay, the time until a breaker lets a trial through.
    public var delay: Duration?
    /// For hedges, which attempt: `1` is the original, `2` the first hedge.
    public var attempt: Int?
    /// A short, non-secret detail (the fault injected).
    public var detail: String?

    /// Creates an event.
    /// - Parameters:
    ///   - kind: What happened.
    ///   - origin: The origin.
    ///   - delay: How long, when it matters.
    ///   - attempt: Which attempt, for hedges.
    ///   - detail: A short detail.
    public init(_ kind: Kind, origin: String, delay: Duration? = nil, attempt: Int? = nil, detail: String? = nil) {
        self.kind = kind
        self.origin = origin
        self.delay = delay
        self.attempt = attempt
        self.detail = detail
    }

    /// For example `circuit_opened https://api.test:443`, `paced https://api.test:443 (2.0 s)` or
    /// `hedge_sent https://api.test:443 (attempt 2, 50 ms)`.
    public var description: String {
        var text = "\(kind.rawValue) \(origin)"
        var parts: [String] = []
        if let attempt { parts.append("attempt \(attempt)") }
        if let delay {
            let seconds = delay.seconds
            parts.append(seconds < 1 ? "\(Int((seconds * 1000).rounded())) ms" : "\((seconds * 10).rounded() / 10) s")
        }
        if let detail { parts.append(detail) }
        if !parts.isEmpty { text += " (" + parts.joined(separator: ", ") + ")" }
        return text
    }

    /// The observers of the current task, innermost last.
    @TaskLocal static var observers: [@Sendable (ResilienceEvent) -> Void] = []

    /// Runs `operation` with `observer` hearing every event the middleware it runs reports (its
    /// child tasks included), beside the observers already in scope.
    /// - Parameters:
    ///   - observer: Called on the task that made the decision; keep it quick.
    ///   - operation: The work to observe.
    ///   - isolation: The caller's isolation.
    /// - Returns: What `operation` returns.
    /// - Throws: What `operation` throws.
    public static func observing<Result>(
        _ observer: @escaping @Sendable (ResilienceEvent) -> Void, operation: () async throws -> Result,
        isolation: isolated (any Actor)? = #isolation
    ) async rethrows -> Result {
        try await $observers.withValue(observers + [observer], operation: operation)
    }

    /// Hands `event` to every observer in scope (none: nothing happens). A middleware of your
    /// own reports its decisions with it.
    /// - Parameter event: The event.
    public static func report(_ event: ResilienceEvent) {
        for observer in observers { observer(event) }
    }

    /// Whether anyone observes events in the current task: build an event only when so.
    public static var isObserved: Bool { !observers.isEmpty }
}
