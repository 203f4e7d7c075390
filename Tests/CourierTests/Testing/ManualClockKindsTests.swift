import Courier
import Foundation
import Testing

/// A test waits for the sleeper it means: with a retry's backoff, an attempt's limit, the idle
/// timer and a stub's delay all on one manual clock, "wait for one sleeper, then advance" moved
/// whichever came first; waiting by kind moves the one the test is about.
@Suite("ManualClock: waiting for the sleeper a test means")
struct ManualClockKindsTests {
    /// The user's setup: retries with an attempt timeout, a request timeout, a slow first answer,
    /// all on one clock. The backoff is waited for and skipped by kind; nothing else fires.
    @Test(.timeLimit(.minutes(1))) func aRetrysBackoffIsWaitedForByKindBesideOtherSleepers() async throws {
        let clock = ManualClock()
        let answers = Box(0)
        let origin = InMemoryExecutor(clock: clock) { _ in
            answers.withLock { count -> Stub in
                count += 1
                return count == 1 ? .status(503).delayed(by: .milliseconds(100)) : .status(200)
            }
        }
        var policy = RetryPolicy(maxAttempts: 2)
        policy.attemptTimeout = .seconds(5)
        let api = origin.with(RetryMiddleware(policy: policy, clock: clock, random: .seeded(7)))
        let call = Task { try await api.send(.get |> url("https://api.test/report") |> timeout(30)) }

        try await clock.waitForSleepers(of: .stubDelay)
        #expect(clock.sleepers(of: .attemptTimeout) == 1)
        clock.advanceToNextWakeUp(of: .stubDelay)
        try await clock.waitForSleepers(of: .retryBackoff)
        // The attempt's limit and the idle timer were never reached: only the backoff moves.
        let backoff = try #require(clock.nextWakeUp(of: .retryBackoff))
        #expect(backoff < clock.now.advanced(by: .seconds(5)))
        clock.advanceToNextWakeUp(of: .retryBackoff)
        let response = try await call.value
        #expect(response.status == 200)
        #expect(answers.withLock { $0 } == 2)
    }

    @Test(.timeLimit(.minutes(1))) func aSleepOfYourOwnIsLabelledAndAWaitThatFailsSaysWhatSleeps() async throws {
        let clock = ManualClock()
        let poll = ManualClock.SleepKind("poll")
        let sleeper = Task { try await ManualClock.labelling(poll) { try await clock.sleep(for: .seconds(3)) } }
        try await clock.waitForSleepers(of: poll)
        #expect(clock.sleepers(of: poll) == 1 && clock.sleepers(of: .retryBackoff) == 0)
        let error = await #expect(throws: ManualClock.WaitTimeout.self) {
            try await clock.waitForSleepers(of: .retryBackoff, timeout: .milliseconds(10))
        }
        #expect(error?.description.contains("of kind retry backoff") == true)
        #expect(error?.description.contains("(poll)") == true)
        clock.advanceToNextWakeUp()
        try await sleeper.value
        #expect(clock.now.offset == .seconds(3))
    }
}
