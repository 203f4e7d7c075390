import CourierCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Stops calling an origin that keeps failing, so that a struggling service gets room to recover
/// and callers fail at once instead of waiting on it.
///
/// Per origin (scheme, host and port), over a sliding ``Policy/window``: once at least
/// ``Policy/minimumCalls`` calls were counted and ``Policy/failureRatio`` of them failed, the
/// breaker **opens**: every call to that origin fails at once with
/// ``CourierError/Cause/circuitOpen(_:)`` (no byte is sent), which says which origin and when
/// the breaker will let a call through again. After ``Policy/breakDuration`` it is **half
/// open**: ``Policy/trialCalls`` calls go through (others still fail at once); a trial that
/// succeeds **closes** it (the window starts afresh), one that fails opens it again.
///
/// What counts as a failure is the caller's to say (``Policy/isFailure``); by default a 5xx
/// status, a timeout and a transient transport failure (a refused, lost or reset connection, DNS)
/// do, and a 4xx, a cancelled call or a decoding error never do.
///
/// Put it inside ``RetryMiddleware``, so that each attempt counts and a fast failure is not
/// retried (it is not transient):
///
/// ```swift
/// let breaker = CircuitBreaker(policy: .init(failureRatio: 0.5, minimumCalls: 20, breakDuration: .seconds(15)))
/// let api = URLSessionExecutor().with(RetryMiddleware(), breaker)
/// ```
///
/// Every change of state and every refused call is a ``ResilienceEvent`` (logged, counted and
/// traced by the observing middleware outside it), and goes to `onTransition` as well.
///
/// One breaker is shared by every call that uses it (it is a reference); memory stays bounded (at
/// most ``maximumOrigins`` origins, closed and quiet ones forgotten first).
public final class CircuitBreaker: Middleware {
    /// How a call ended, as the breaker judges it.
    public enum Outcome: Sendable {
        /// A response head arrived with this status.
        case status(Int)
        /// The call failed before a response head.
        case failure(CourierError)

        /// The default judgement: a 5xx status, a timeout or a transient transport failure.
        public var isServerFailure: Bool {
            switch self {
            case .status(let status): (500..<600).contains(status)
            case .failure(let error):
                switch error.cause {
                case .timedOut: true
                case .transport(let failure): failure.isTransient
                default: false
                }
            }
        }
    }

    /// When the breaker opens, for how long, and what counts.
    public struct Policy: Sendable {
        /// The share of counted calls that must fail to open the breaker, in `0...1` (clamped;
        /// a non-finite value counts as `1`). 0.5 by default.
        public var failureRatio: Double
        /// The fewest calls in the window before the breaker may open (at least 1). 10 by
        /// default.
        public var minimumCalls: Int
        /// How far back calls count (at least 10 ms). 30 s by default.
        public var window: Duration
        /// How long the breaker stays open before it lets trial calls through. 30 s by default.
        public var breakDuration: Duration
        /// How many trial calls go through at once while half open (at least 1). 1 by default.
        public var trialCalls: Int
        /// Whether an outcome is a failure; ``Outcome/isServerFailure`` by default.
        public var isFailure: @Sendable (Outcome) -> Bool

        /// Creates a policy; out-of-range values are clamped.
        /// - Parameters:
        ///   - failureRatio: The share of calls that must fail; 0.5 by default.
        ///   - minimumCalls: The fewest calls before opening; 10 by default.
        ///   - window: How far back calls count; 30 s by default.
        ///   - breakDuration: How long it stays open; 30 s by default.
        ///   - trialCalls: Trial calls at once while half open; 1 by default.
        ///   - isFailure: What counts as a failure; 5xx, timeouts and transient transport
        ///     failures by default.
        public init(
            failureRatio: Double = 0.5, minimumCalls: Int = 10, window: Duration = .seconds(30), breakDuration: Duration = .seconds(30),
            trialCalls: Int = 1, isFailure: @escaping @Sendable (Outcome) -> Bool = { $0.isServerFailure }
        ) {
            self.failureRatio = failureRatio.isFinite ? Swift.min(1, Swift.max(0, failureRatio)) : 1
            self.minimumCalls = Swift.max(1, minimumCalls)
            self.window = Swift.min(Swift.max(window, .milliseconds(10)), .seconds(Request.maximumInterval))
            self.breakDuration = Swift.min(Swift.max(breakDuration, .zero), .seconds(Request.maximumInterval))
            self.trialCalls = Swift.max(1, trialCalls)
            self.isFailure = isFailure
        }
    }

    /// Where a breaker stands for one origin.
    public enum State: String, Sendable, Hashable {
        /// Calls go through and are counted.
        case closed
        /// Calls fail at once.
        case open
        /// Trial calls go through; the others fail at once.
        case halfOpen
    }

    /// A change of state for one origin, as ``init(policy:clock:onTransition:)`` reports it.
    public struct Transition: Sendable, Hashable, CustomStringConvertible {
        /// The origin: `https://api.example.com:443`.
        public var origin: String
        /// The state before.
        public var from: State
        /// The state after.
        public var to: State

        /// For example `https://api.test:443: closed → open`.
        public var description: String { "\(origin): \(from.rawValue) → \(to.rawValue)" }
    }

    /// The most origins tracked at once.
    public static let maximumOrigins = 1024

    private struct Circuit {
        var state = State.closed
        /// Calls (first) and failures (second) while closed.
        var counts = SlidingCounts()
        var openedAt = Duration.zero
        var trialsInFlight = 0
        var lastUse = Duration.zero

    }

    /// What a call may do.
    private enum Admission {
        case proceed(trial: Bool)
        case refuse(retryAfter: Duration?)
    }

    /// The policy.
    public let policy: Policy
    private let clock: ElapsedClock
    private let onTransition: (@Sendable (Transition) -> Void)?
    private let circuits = Locked<[String: Circuit]>([:])

    /// Creates a breaker.
    /// - Parameters:
    ///   - policy: When it opens, for how long, and what counts.
    ///   - clock: The clock the window and the break run on: `ContinuousClock` by default, a
    ///     ``ManualClock`` in tests.
    ///   - onTransition: Called on every change of state (for logs and metrics), outside the
    ///     breaker's lock.
    public init(
        policy: Policy = Policy(), clock: some Clock<Duration> = ContinuousClock(),
        onTransition: (@Sendable (Transition) -> Void)? = nil
    ) {
        self.policy = policy
        self.clock = ElapsedClock(clock)
        self.onTransition = onTransition
    }

    /// The state of the breaker for the origin of `request` (open turns half open once the break
    /// is over, when the next call comes).
    /// - Parameter request: A request to the origin.
    /// - Returns: The state.
    public func state(for request: Request) -> State {
        circuits.withLock { $0[RetryBudget.origin(of: request)]?.state ?? .closed }
    }

    /// Sends the request unless the origin's breaker is open, and counts how it ended.
    /// - Parameters:
    ///   - request: The request.
    ///   - next: The rest of the chain.
    /// - Returns: The response, unchanged.
    /// - Throws: ``CourierError/Cause/circuitOpen(_:)`` while the breaker is open, or what the
    ///   rest of the chain throws.
    public func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
        let origin = RetryBudget.origin(of: request)
        let (admission, changes) = admit(origin)
        report(changes)
        switch admission {
        case .refuse(let retryAfter):
            ResilienceEvent.report(ResilienceEvent(.circuitRejected, origin: origin, delay: retryAfter))
            throw CourierError(.circuitOpen(CircuitOpen(origin: origin, retryAfter: retryAfter)), request: request)
        case .proceed(let trial):
            do {
                let response = try await next(request)
                report(record(origin, .status(response.status), trial: trial))
                return response
            } catch {
                let failure = CourierError.wrapping(error, request: request)
                if case .cancelled = failure.cause {
                    // Not an outcome: a trial's place is freed, nothing is counted.
                    if trial { circuits.withLock { $0[origin]?.trialsInFlight -= 1 } }
                } else {
                    report(record(origin, .failure(failure), trial: trial))
                }
                throw error
            }
        }
    }

    private func admit(_ origin: String) -> (Admission, [Transition]) {
        let now = clock.now
        return circuits.withLock { circuits in
            var circuit = circuits[origin] ?? Circuit()
            var changes: [Transition] = []
            defer {
                circuit.lastUse = now
                circuits[origin] = circuit
                if circuits.count > Self.maximumOrigins { forgetQuietest(&circuits, keeping: origin) }
            }
            if circuit.state == .open {
                let reopens = circuit.openedAt + policy.breakDuration
                guard now >= reopens else { return (.refuse(retryAfter: reopens - now), changes) }
                circuit.state = .halfOpen
                circuit.trialsInFlight = 0
                changes.append(Transition(origin: origin, from: .open, to: .halfOpen))
            }
            if circuit.state == .halfOpen {
                guard circuit.trialsInFlight < policy.trialCalls else { return (.refuse(retryAfter: nil), changes) }
                circuit.trialsInFlight += 1
                return (.proceed(trial: true), changes)
            }
            return (.proceed(trial: false), changes)
        }
    }

    private func record(_ origin: String, _ outcome: Outcome, trial: Bool) -> [Transition] {
        let failed = policy.isFailure(outcome)
        let now = clock.now
        let slice = SlidingCounts.slice(at: now, window: policy.window)
        return circuits.withLock { circuits in
            guard var circuit = circuits[origin] else { return [] }
            defer { circuits[origin] = circuit }
            if trial {
                circuit.trialsInFlight = Swift.max(0, circuit.trialsInFlight - 1)
                guard circuit.state == .halfOpen else { return [] }
                if failed {
                    circuit.state = .open
                    circuit.openedAt = now
                    return [Transition(origin: origin, from: .halfOpen, to: .open)]
                }
                circuit.state = .closed
                circuit.counts.reset()
                return [Transition(origin: origin, from: .halfOpen, to: .closed)]
            }
            // A call admitted while closed that ends after the breaker opened changes nothing.
            guard circuit.state == .closed else { return [] }
            circuit.counts.slide(to: slice)
            circuit.counts.add(first: 1, second: failed ? 1 : 0, in: slice)
            let calls = circuit.counts.first
            guard failed, calls >= policy.minimumCalls, Double(circuit.counts.second) >= policy.failureRatio * Double(calls) else { return [] }
            circuit.state = .open
            circuit.openedAt = now
            circuit.counts.reset()
            return [Transition(origin: origin, from: .closed, to: .open)]
        }
    }

    private func report(_ changes: [Transition]) {
        for change in changes {
            onTransition?(change)
            let kind: ResilienceEvent.Kind
            switch change.to {
            case .open: kind = .circuitOpened
            case .halfOpen: kind = .circuitHalfOpened
            case .closed: kind = .circuitClosed
            }
            ResilienceEvent.report(ResilienceEvent(kind, origin: change.origin))
        }
    }

    /// Drops closed origins first, the one used longest ago; an open one only when all are.
    private func forgetQuietest(_ circuits: inout [String: Circuit], keeping key: String) {
        while circuits.count > Self.maximumOrigins {
            let candidates = circuits.filter { $0.key != key }
            let closed = candidates.filter { $0.value.state == .closed }
            guard let quietest = (closed.isEmpty ? candidates : closed).min(by: { $0.value.lastUse < $1.value.lastUse })?.key else { return }
            circuits[quietest] = nil
        }
    }
}
