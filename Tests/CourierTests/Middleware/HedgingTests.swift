import Courier
import Foundation
import Testing

/// Hedging on a `ManualClock` over the in-memory transport: when a hedge goes, that the first
/// acceptable answer wins and the loser is cancelled, what is never hedged, the budget's bound,
/// a percentile delay learnt from recent answers, and the events.
@Suite("HedgingMiddleware: a second copy of a slow idempotent request")
struct HedgingTests {
    private static let get = Request.get |> url("https://a.test/items")

    /// An origin whose n-th request takes `latencies[n]` on the clock (the last one repeats) and
    /// answers `statuses[n]` (likewise); it records which requests were cancelled.
    private final class SlowOrigin: Sendable {
        let executor: InMemoryExecutor
        let cancelled = Box([Int]())
        let started = Box(0)

        init(clock: ManualClock, latencies: [Duration], statuses: [Int] = [200]) {
            let started = self.started
            let cancelled = self.cancelled
            executor = InMemoryExecutor(clock: clock) { _ in
                let number = started.withLock { count -> Int in
                    count += 1
                    return count
                }
                let latency = latencies[min(number, latencies.count) - 1]
                do {
                    try await clock.sleep(for: latency)
                } catch {
                    cancelled.withLock { $0.append(number) }
                    throw error
                }
                return .status(statuses[min(number, statuses.count) - 1], headers: ["X-Attempt": "\(number)"])
            }
        }
    }

    private static func collecting() -> (Box<[ResilienceEvent]>, @Sendable (ResilienceEvent) -> Void) {
        let events = Box([ResilienceEvent]())
        return (events, { event in events.withLock { $0.append(event) } })
    }

    @Test func aSlowAttemptIsHedgedAfterTheDelayAndTheLoserIsCancelled() async throws {
        let clock = ManualClock()
        let origin = SlowOrigin(clock: clock, latencies: [.seconds(10), .seconds(1)])
        let executor = origin.executor.with(HedgingMiddleware(delay: .fixed(.milliseconds(100)), clock: clock))
        let (events, observe) = Self.collecting()
        let call = Task { try await ResilienceEvent.observing(observe) { try await executor.send(Self.get) } }
        try await clock.waitForSleepers(2)  // the first attempt and its hedge timer
        clock.advance(by: .milliseconds(100))
        try await clock.waitForSleepers(2)  // the first attempt and the hedge
        #expect(origin.started.withLock { $0 } == 2)
        clock.advance(by: .seconds(1))
        let response = try await call.value
        #expect(response.headers["X-Attempt"] == "2", "the hedge answered first")
        #expect(origin.cancelled.withLock { $0 } == [1], "the first attempt was cancelled when the hedge won")
        #expect(clock.sleepers == 0)
        #expect(
            events.withLock { $0.map(\.description) } == [
                "hedge_sent https://a.test:443 (attempt 2, 100 ms)", "hedge_won https://a.test:443 (attempt 2)",
            ])
    }

    @Test func aFastAnswerIsNeverHedged() async throws {
        let clock = ManualClock()
        let origin = SlowOrigin(clock: clock, latencies: [.milliseconds(50)])
        let executor = origin.executor.with(HedgingMiddleware(delay: .fixed(.milliseconds(100)), clock: clock))
        let (events, observe) = Self.collecting()
        let call = Task { try await ResilienceEvent.observing(observe) { try await executor.send(Self.get) } }
        try await clock.waitForSleepers(2)
        clock.advance(by: .milliseconds(50))
        #expect(try await call.value.status == 200)
        #expect(origin.started.withLock { $0 } == 1)
        #expect(events.withLock { $0 }.isEmpty)
        #expect(clock.sleepers == 0, "the hedge timer was cancelled")
    }

    @Test func aRequestThatMayNotBeSentTwiceIsNeverHedged() async throws {
        let clock = ManualClock()
        let origin = SlowOrigin(clock: clock, latencies: [.seconds(1)])
        let executor = origin.executor.with(HedgingMiddleware(delay: .fixed(.milliseconds(10)), clock: clock))
        let post = Request.post |> url("https://a.test/items") |> body(Data("x".utf8))
        let call = Task { try await executor.send(post) }
        try await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(500))
        #expect(clock.sleepers == 1, "no timer, no hedge")
        clock.advance(by: .milliseconds(500))
        #expect(try await call.value.status == 200)
        #expect(origin.started.withLock { $0 } == 1)
        // With an idempotency key it is hedged.
        let keyed = post |> header(.idempotencyKey, "k-1")
        let second = Task { try await executor.send(keyed) }
        try await clock.waitForSleepers(2)
        clock.advance(by: .milliseconds(10))
        try await clock.waitForSleepers(2)
        #expect(origin.started.withLock { $0 } == 3)
        clock.advance(by: .seconds(1))
        _ = try await second.value
    }

    @Test func aFailedAttemptHedgesAtOnceAndTheLastOutcomeEndsACallWhoseAttemptsAllFailed() async throws {
        let clock = ManualClock()
        let origin = SlowOrigin(clock: clock, latencies: [.milliseconds(5)], statuses: [503, 200])
        let executor = origin.executor.with(HedgingMiddleware(maxAttempts: 3, delay: .fixed(.seconds(1)), clock: clock))
        let call = Task { try await executor.send(Self.get) }
        try await clock.waitForSleepers(2)
        clock.advance(by: .milliseconds(5))
        // The 503 started the hedge at once, long before its delay: the hedge, its timer and the
        // first attempt's timer sleep.
        try await clock.waitForSleepers(3)
        clock.advance(by: .milliseconds(5))
        let response = try await call.value
        #expect(response.status == 200 && response.headers["X-Attempt"] == "2")

        let failing = SlowOrigin(clock: clock, latencies: [.milliseconds(5)], statuses: [503, 502, 500])
        let all = failing.executor.with(HedgingMiddleware(maxAttempts: 3, delay: .fixed(.seconds(1)), clock: clock))
        let lost = Task { try await all.send(Self.get) }
        // Sleeping: the attempt and its timer; then the older timer, the hedge and its timer;
        // then both timers and the last hedge (it has none).
        for sleepers in [2, 3, 3] {
            try await clock.waitForSleepers(sleepers)
            clock.advance(by: .milliseconds(5))
        }
        #expect(try await lost.value.status == 500, "the last outcome")
        #expect(failing.started.withLock { $0 } == 3)
    }

    @Test func theRetryBudgetBoundsHedges() async throws {
        let clock = ManualClock()
        let origin = SlowOrigin(clock: clock, latencies: [.seconds(1)])
        let budget = RetryBudget(ratio: 0, minimumPerSecond: 0, clock: clock)
        let executor = origin.executor.with(HedgingMiddleware(delay: .fixed(.milliseconds(100)), budget: budget, clock: clock))
        let (events, observe) = Self.collecting()
        let call = Task { try await ResilienceEvent.observing(observe) { try await executor.send(Self.get) } }
        try await clock.waitForSleepers(2)
        clock.advance(by: .milliseconds(100))
        try await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        #expect(try await call.value.status == 200)
        #expect(origin.started.withLock { $0 } == 1, "no budget, no hedge")
        #expect(events.withLock { $0.map(\.kind) } == [.retryBudgetExhausted])
        #expect(budget.counts(for: Self.get) == (1, 0))
    }

    @Test func aBudgetSharedWithTheRetryCountsEachCallOnce() async throws {
        let budget = RetryBudget(ratio: 0.5, minimumPerSecond: 0, clock: ManualClock())
        let executor = InMemoryExecutor.scripted([], then: .status(200))
            .with(RetryMiddleware(policy: RetryPolicy(), budget: budget), HedgingMiddleware(delay: .fixed(.seconds(5)), budget: budget))
        for _ in 0..<4 { _ = try await executor.send(Self.get) }
        #expect(budget.counts(for: Self.get) == (4, 0))
    }

    @Test func aPercentileDelayIsLearntFromRecentAnswers() async throws {
        let clock = ManualClock()
        // 100 answers: 100 ms … 1 ms (slowest first, so that none outlasts the delay learnt so far).
        let latencies = (1...100).reversed().map { Duration.milliseconds($0) }
        let origin = SlowOrigin(clock: clock, latencies: latencies + [.milliseconds(1)])
        let hedging = HedgingMiddleware(delay: .percentile(0.9, initial: .milliseconds(250)), clock: clock)
        let executor = origin.executor.with(hedging)
        #expect(hedging.currentDelay(for: Self.get) == .milliseconds(250), "no answers yet")
        for latency in latencies {
            let call = Task { try await executor.send(Self.get) }
            try await clock.waitForSleepers(2)
            clock.advance(by: latency)
            _ = try await call.value
        }
        // The percentile is sorted again every 32 answers: here it was last at 84 answers
        // (100 … 17 ms), whose 90th percentile is 92 ms; the exact one of all 100 is 90 ms.
        let learnt = hedging.currentDelay(for: Self.get)
        #expect(learnt >= .milliseconds(90) && learnt <= .milliseconds(92), "\(learnt)")
        let other = Request.get |> url("https://b.test/")
        #expect(hedging.currentDelay(for: other) == .milliseconds(250), "per origin")
        #expect(HedgingMiddleware.Delay.percentile(.nan).description.hasPrefix("p95"))
        #expect(HedgingMiddleware(maxAttempts: 1_000).maxAttempts == 10)
    }

    @Test func cancellingTheCallCancelsEveryAttempt() async throws {
        let clock = ManualClock()
        let origin = SlowOrigin(clock: clock, latencies: [.seconds(10)])
        let executor = origin.executor.with(HedgingMiddleware(delay: .fixed(.milliseconds(100)), clock: clock))
        let call = Task { try await executor.send(Self.get) }
        try await clock.waitForSleepers(2)
        clock.advance(by: .milliseconds(100))
        try await clock.waitForSleepers(2)
        call.cancel()
        await #expect(throws: (any Error).self) { _ = try await call.value }
        #expect(origin.cancelled.withLock { $0.sorted() } == [1, 2])
        #expect(clock.sleepers == 0)
    }
}
