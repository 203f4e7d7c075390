import CourierCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Sends a second copy of a slow idempotent request and takes whichever answers first: the cure
/// for a server's slow tail (one replica stuck in a pause, one lost packet waiting on a
/// retransmission).
///
/// The first attempt goes at once. When it has not answered after ``delay`` (fixed, or a
/// percentile of the origin's recent latency), a hedge is sent beside it, and so on up to
/// ``maxAttempts`` in all. The first *acceptable* answer wins (a response whose status is not in
/// ``failingStatuses``); the others are cancelled at once, their connections closed, so that the
/// server sees them go. An attempt that fails (an error, or a failing status) starts the next
/// hedge without waiting for the delay. When every attempt failed, the call ends with the last
/// outcome, as ``RetryMiddleware`` does.
///
/// Only requests that may be sent twice are hedged (``Request/isRetryable``: idempotent methods,
/// an `Idempotency-Key`, or ``retryable(_:)``); the others pass through untouched. With a
/// ``RetryBudget`` each hedge is taken from it like a retry, so hedging cannot multiply the
/// load on an origin that is slow for everyone: a hedge the budget refuses is not sent.
///
/// Hedges sent and won are ``ResilienceEvent``s (``ResilienceEvent/Kind/hedgeSent``,
/// ``ResilienceEvent/Kind/hedgeWon``).
///
/// ```swift
/// let budget = RetryBudget()
/// let hedging = HedgingMiddleware(delay: .percentile(0.95), budget: budget)
/// let api = InMemoryExecutor.scripted([], then: .status(200))
///     .with(RetryMiddleware(policy: RetryPolicy(), budget: budget), hedging)
/// ```
public struct HedgingMiddleware: Middleware {
    /// How long to wait for an attempt before sending the next one.
    public struct Delay: Sendable, Hashable, CustomStringConvertible {
        enum Rule: Hashable {
            case fixed(Duration)
            case percentile(Double, initial: Duration, minimum: Duration)
        }
        let rule: Rule

        /// Always the same wait.
        /// - Parameter delay: The wait (clamped to zero … a year).
        /// - Returns: The delay.
        public static func fixed(_ delay: Duration) -> Delay {
            Delay(rule: .fixed(AttemptTimeoutMiddleware.clamped(delay)))
        }

        /// The given percentile of the origin's recent response-head latencies (the last
        /// ``HedgingMiddleware/latencySamples`` answers), so that only the slowest share of calls
        /// is hedged: `0.95` hedges about one call in twenty.
        /// - Parameters:
        ///   - percentile: In `0...1` (clamped; a non-finite value counts as 0.95).
        ///   - initial: The wait until the origin has answered 20 times; 100 ms by default.
        ///   - minimum: The shortest wait, however fast the origin; 1 ms by default.
        /// - Returns: The delay.
        public static func percentile(
            _ percentile: Double, initial: Duration = .milliseconds(100), minimum: Duration = .milliseconds(1)
        ) -> Delay {
            let share = percentile.isFinite ? Swift.min(1, Swift.max(0, percentile)) : 0.95
            return Delay(
                rule: .percentile(
                    share, initial: AttemptTimeoutMiddleware.clamped(initial), minimum: AttemptTimeoutMiddleware.clamped(minimum)))
        }

        /// For example `fixed 0.05 s` or `p95 (0.1 s until 20 answers)`.
        public var description: String {
            switch rule {
            case .fixed(let delay): "fixed \(delay.seconds) s"
            case .percentile(let share, let initial, _): "p\((share * 1000).rounded() / 10) (\(initial.seconds) s until 20 answers)"
            }
        }
    }

    /// The most attempts in all, the original included (1 to 10; 2 by default).
    public let maxAttempts: Int
    /// How long to wait before each hedge.
    public let delay: Delay
    /// The statuses that do not win: the next hedge starts at once instead. 500, 502, 503 and
    /// 504 by default.
    public let failingStatuses: Set<Int>
    /// The budget hedges are taken from, shared with whoever else holds it; `nil` for none.
    public let budget: RetryBudget?
    /// How many recent latencies a percentile delay looks at, per origin.
    public static let latencySamples = 1024

    private let clock: ElapsedClock
    private let latencies: LatencyWindow

    /// Creates the middleware.
    /// - Parameters:
    ///   - maxAttempts: The most attempts in all, the original included; 2 by default.
    ///   - delay: How long to wait before each hedge; the 95th percentile by default.
    ///   - failingStatuses: Statuses that do not win; 500, 502, 503 and 504 by default.
    ///   - budget: The budget hedges are taken from; `nil` (the default) for none.
    ///   - clock: The clock delays run on: `ContinuousClock` by default, a ``ManualClock`` in
    ///     tests.
    public init(
        maxAttempts: Int = 2, delay: Delay = .percentile(0.95), failingStatuses: Set<Int> = [500, 502, 503, 504],
        budget: RetryBudget? = nil, clock: some Clock<Duration> = ContinuousClock()
    ) {
        self.maxAttempts = Swift.min(Swift.max(1, maxAttempts), 10)
        self.delay = delay
        self.failingStatuses = failingStatuses
        self.budget = budget
        self.clock = ElapsedClock(clock)
        self.latencies = LatencyWindow(capacity: Self.latencySamples)
    }

    /// The wait before a hedge to the origin of `request`, as things stand.
    /// - Parameter request: A request to the origin.
    /// - Returns: The delay.
    public func currentDelay(for request: Request) -> Duration {
        currentDelay(origin: RetryBudget.origin(of: request))
    }

    private func currentDelay(origin: String) -> Duration {
        switch delay.rule {
        case .fixed(let delay): return delay
        case .percentile(let share, let initial, let minimum):
            guard let seen = latencies.percentile(share, of: origin) else { return initial }
            return Swift.max(seen, minimum)
        }
    }

    private enum Finished: Sendable {
        case attempt(Int, Result<StreamedResponse, any Error>, Duration)
        case timer(Int)
    }

    /// Sends the request, hedging it as the policy allows.
    /// - Parameters:
    ///   - request: The request.
    ///   - next: The rest of the chain.
    /// - Returns: The first acceptable response, or the last outcome's.
    /// - Throws: The last error, or `CancellationError`.
    public func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
        let origin = RetryBudget.origin(of: request)
        guard maxAttempts > 1, request.isRetryable else {
            let start = clock.now
            let response = try await next(request)
            latencies.add(clock.now - start, for: origin)
            return response
        }
        if let budget, RetryBudget.recordedCall != ObjectIdentifier(budget) { budget.recordCall(request) }
        let wait = currentDelay(origin: origin)
        let clock = self.clock
        let maxAttempts = self.maxAttempts
        let callStart = clock.now
        return try await withoutActuallyEscaping(next) { next in
            try await withThrowingTaskGroup(of: Finished.self) { group in
                /// Starts attempt `number`, and the timer that hedges it if it is not the last.
                func launch(_ number: Int) {
                    group.addTask {
                        let start = clock.now
                        do {
                            let response = try await next(request)
                            return .attempt(number, .success(response), clock.now - start)
                        } catch {
                            return .attempt(number, .failure(error), clock.now - start)
                        }
                    }
                    guard number < maxAttempts else { return }
                    group.addTask {
                        try await clock.sleep(for: wait, as: .hedgeDelay)
                        return .timer(number)
                    }
                }
                var launched = 1
                var running = 1
                var refused = false
                /// Sends the next hedge, if attempts and the budget allow.
                func hedge() -> Bool {
                    guard !refused, launched < maxAttempts, !Task.isCancelled else { return false }
                    if let budget, !budget.withdrawRetry(for: request) {
                        refused = true
                        ResilienceEvent.report(ResilienceEvent(.retryBudgetExhausted, origin: origin))
                        return false
                    }
                    launched += 1
                    running += 1
                    ResilienceEvent.report(ResilienceEvent(.hedgeSent, origin: origin, delay: clock.now - callStart, attempt: launched))
                    launch(launched)
                    return true
                }
                launch(1)
                var last: Result<StreamedResponse, any Error>?
                defer { group.cancelAll() }
                while let finished = try await group.next() {
                    switch finished {
                    case .timer(let number):
                        // Only the newest attempt's timer hedges; an older one is stale.
                        if number == launched { _ = hedge() }
                    case .attempt(let number, let outcome, let latency):
                        running -= 1
                        if case .success(let response) = outcome, !failingStatuses.contains(response.status) {
                            latencies.add(latency, for: origin)
                            if launched > 1 { ResilienceEvent.report(ResilienceEvent(.hedgeWon, origin: origin, attempt: number)) }
                            await Self.dropLosers(of: &group)
                            return response
                        }
                        // A newer outcome supersedes an older one: stop the older one's transfer.
                        if let previous = last { try? previous.get().body.cancel() }
                        last = outcome
                        if Task.isCancelled {
                            await Self.dropLosers(of: &group)
                            try? outcome.get().body.cancel()
                            throw CancellationError()
                        }
                        // A failed attempt hedges at once; with none running and none to send,
                        // the call ends with this outcome.
                        if !hedge(), running == 0 {
                            await Self.dropLosers(of: &group)
                            return try outcome.get()
                        }
                    }
                }
                throw CancellationError()
            }
        }
    }

    /// Cancels the attempts still running and stops the transfer of any that answered late.
    private static func dropLosers(of group: inout ThrowingTaskGroup<Finished, any Error>) async {
        group.cancelAll()
        while let late = try? await group.next() {
            if case .attempt(_, .success(let response), _) = late { response.body.cancel() }
        }
    }
}

/// The most recent latencies per origin, for a percentile hedge delay; bounded in samples and
/// origins.
final class LatencyWindow: Sendable {
    private struct Samples {
        var ring: [Duration] = []
        var next = 0
        var sortedCache: Duration?
        var cacheShare = -1.0
        var sinceCache = 0
        var lastUse: UInt64 = 0
    }

    private let capacity: Int
    private let origins = Locked<(samples: [String: Samples], tick: UInt64)>(([:], 0))
    /// The most origins tracked at once.
    static let maximumOrigins = 256
    /// Answers needed before a percentile is trusted.
    static let minimumSamples = 20

    init(capacity: Int) { self.capacity = capacity }

    func add(_ latency: Duration, for origin: String) {
        origins.withLock { state in
            state.tick &+= 1
            var samples = state.samples[origin] ?? Samples()
            if samples.ring.count < capacity {
                samples.ring.append(latency)
            } else {
                samples.ring[samples.next] = latency
                samples.next = (samples.next + 1) % capacity
            }
            samples.sinceCache += 1
            samples.lastUse = state.tick
            state.samples[origin] = samples
            if state.samples.count > Self.maximumOrigins,
                let quietest = state.samples.filter({ $0.key != origin }).min(by: { $0.value.lastUse < $1.value.lastUse })?.key
            {
                state.samples[quietest] = nil
            }
        }
    }

    /// The latency below which `share` of the samples lie; `nil` with fewer than
    /// ``minimumSamples``. Sorted again only every 32 new samples.
    func percentile(_ share: Double, of origin: String) -> Duration? {
        origins.withLock { state in
            guard var samples = state.samples[origin], samples.ring.count >= Self.minimumSamples else { return nil }
            if let cached = samples.sortedCache, samples.cacheShare == share, samples.sinceCache < 32 { return cached }
            let sorted = samples.ring.sorted()
            let index = Swift.min(sorted.count - 1, Swift.max(0, Int((share * Double(sorted.count)).rounded(.up)) - 1))
            samples.sortedCache = sorted[index]
            samples.cacheShare = share
            samples.sinceCache = 0
            state.samples[origin] = samples
            return sorted[index]
        }
    }
}
