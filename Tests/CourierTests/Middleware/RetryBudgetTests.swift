import Courier
import Foundation
import Testing

/// The retry budget: its arithmetic over a sliding window on a `ManualClock`, per origin, and
/// what it does to the load a failing origin receives from a retrying client.
@Suite("RetryBudget: retries as a share of recent calls, per origin")
struct RetryBudgetTests {
    private static let a = Request.get |> url("https://a.test/items")
    private static let b = Request.get |> url("https://b.test/items")

    @Test func retriesAreAShareOfTheCallsInTheWindowPlusAFloor() {
        let clock = ManualClock()
        let budget = RetryBudget(ratio: 0.2, minimumPerSecond: 0, window: .seconds(10), clock: clock)
        #expect(!budget.withdrawRetry(for: Self.a), "no calls, no floor: no retry")
        for _ in 0..<10 { budget.recordCall(Self.a) }
        #expect(budget.withdrawRetry(for: Self.a))
        #expect(budget.withdrawRetry(for: Self.a))
        #expect(!budget.withdrawRetry(for: Self.a), "20% of 10 calls is 2 retries")
        #expect(budget.counts(for: Self.a) == (10, 2), "a refused retry is not counted")
        // Another origin has a budget of its own.
        #expect(!budget.withdrawRetry(for: Self.b))
        #expect(budget.counts(for: Self.b) == (0, 0))
        // A whole window later the old calls and retries no longer count.
        clock.advance(by: .seconds(11))
        #expect(budget.counts(for: Self.a) == (0, 0))
        for _ in 0..<5 { budget.recordCall(Self.a) }
        #expect(budget.withdrawRetry(for: Self.a))
        #expect(!budget.withdrawRetry(for: Self.a))
    }

    @Test func theWindowSlidesSliceBySlice() {
        let clock = ManualClock()
        let budget = RetryBudget(ratio: 0.5, minimumPerSecond: 0, window: .seconds(10), clock: clock)
        for _ in 0..<4 { budget.recordCall(Self.a) }
        clock.advance(by: .seconds(5))
        for _ in 0..<4 { budget.recordCall(Self.a) }
        #expect(budget.counts(for: Self.a) == (8, 0))
        clock.advance(by: .seconds(6))
        // The first four are more than a window old; the last four are not.
        #expect(budget.counts(for: Self.a) == (4, 0))
        #expect(budget.withdrawRetry(for: Self.a) && budget.withdrawRetry(for: Self.a))
        #expect(!budget.withdrawRetry(for: Self.a))
    }

    @Test func aQuietOriginMayStillRetryAtTheFloor() {
        let budget = RetryBudget(ratio: 0, minimumPerSecond: 1, window: .seconds(10), clock: ManualClock())
        for _ in 0..<10 { #expect(budget.withdrawRetry(for: Self.a)) }
        #expect(!budget.withdrawRetry(for: Self.a), "one a second over ten seconds")
    }

    @Test func hostileSettingsAreClamped() {
        for ratio in [-1, .nan, .infinity, 7] as [Double] {
            let budget = RetryBudget(ratio: ratio, minimumPerSecond: -.infinity, window: .seconds(-5), clock: ManualClock())
            #expect((0...1).contains(budget.ratio))
            #expect(budget.minimumPerSecond == 0)
            #expect(budget.window >= .milliseconds(10))
            budget.recordCall(Self.a)
            _ = budget.withdrawRetry(for: Self.a)
        }
        let huge = RetryBudget(window: .seconds(Int64.max), clock: ManualClock())
        huge.recordCall(Self.a)
        #expect(huge.counts(for: Self.a).calls == 1)
    }

    @Test func theOriginsTrackedAreBounded() {
        let budget = RetryBudget(clock: ManualClock())
        let requests = (0...RetryBudget.maximumOrigins).map { Request.get |> url("https://host\($0).test/") }
        for request in requests { budget.recordCall(request) }
        let tracked = requests.filter { budget.counts(for: $0).calls > 0 }.count
        #expect(tracked == RetryBudget.maximumOrigins)
        #expect(budget.counts(for: requests[RetryBudget.maximumOrigins]).calls == 1, "the newest is kept")
    }

    /// An origin that fails every call: without a budget it receives `maxAttempts` requests per
    /// call; with the default 20% (and no floor), at most 1.2.
    @Test func aFailingOriginReceivesAtMostOnePointTwoRequestsPerCall() async throws {
        let policy = RetryPolicy(maxAttempts: 4, baseDelay: .zero, deadline: nil)
        let calls = 400
        func load(budget: RetryBudget?) async throws -> Int {
            let origin = InMemoryExecutor.scripted([], then: .status(503))
            let retry = budget.map { RetryMiddleware(policy: policy, budget: $0, clock: ManualClock()) }
                ?? RetryMiddleware(policy: policy, clock: ManualClock())
            let executor = origin.with(retry)
            for _ in 0..<calls {
                let response = try await executor.stream(Self.a)
                #expect(response.status == 503)
            }
            return origin.requests.count
        }
        let unbudgeted = try await load(budget: nil)
        #expect(unbudgeted == calls * 4)
        let budget = RetryBudget(ratio: 0.2, minimumPerSecond: 0, clock: ManualClock())
        let budgeted = try await load(budget: budget)
        #expect(Double(budgeted) / Double(calls) <= 1.2)
        #expect(budgeted >= calls, "every call was made once")
        #expect(budget.counts(for: Self.a) == (calls, budgeted - calls))
    }
}
