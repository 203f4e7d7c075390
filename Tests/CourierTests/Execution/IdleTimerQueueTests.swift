import Foundation
import Testing

@testable import CourierCore

/// The one sleeper behind an exchange's idle timers: watching a hop costs an entry, not a task.
/// Driven by `ManualClock`, whose sleepers are the tasks the queue runs.
@Suite("Exchange: one sleeper for every idle timer", .timeLimit(.minutes(1)))
struct IdleTimerQueueTests {
    /// Counts the timers that fired, and wakes a test waiting for a number of them.
    private final class Fired: Sendable {
        private let count = Locked((fired: 0, waiting: [(Int, CheckedContinuation<Void, Never>)]()))

        func fire() {
            let ready = count.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.fired += 1
                let fired = state.fired
                let ready = state.waiting.filter { $0.0 <= fired }.map(\.1)
                state.waiting.removeAll { $0.0 <= fired }
                return ready
            }
            for waiter in ready { waiter.resume() }
        }

        var value: Int { count.withLock { $0.fired } }

        func wait(for number: Int) async {
            await withCheckedContinuation { continuation in
                let now = count.withLock { state -> Bool in
                    if state.fired >= number { return true }
                    state.waiting.append((number, continuation))
                    return false
                }
                if now { continuation.resume() }
            }
        }
    }

    @Test func aHundredWatchedHopsShareOneSleeper() async throws {
        let clock = ManualClock()
        let queue = IdleTimerQueue(clock: clock)
        let fired = Fired()
        let timers = (0..<100).map { _ in IdleTimer(timeout: .seconds(5), queue: queue) }
        for timer in timers { timer.start { fired.fire() } }
        try await clock.waitForSleepers(1)
        #expect(clock.sleepers == 1)
        #expect(clock.totalSleeps == 1)
        clock.advance(by: .seconds(5))
        await fired.wait(for: 100)
        #expect(timers.allSatisfy { $0.fired })
    }

    @Test func aTimerStoppedInTimeNeverFiresAndTheSleeperEnds() async throws {
        let clock = ManualClock()
        let queue = IdleTimerQueue(clock: clock)
        let fired = Fired()
        let stopped = IdleTimer(timeout: .seconds(5), queue: queue)
        let watched = IdleTimer(timeout: .seconds(5), queue: queue)
        stopped.start { fired.fire() }
        watched.start { fired.fire() }
        try await clock.waitForSleepers(1)
        stopped.stop()
        clock.advance(by: .seconds(5))
        await fired.wait(for: 1)
        #expect(watched.fired)
        #expect(!stopped.fired)
        // Nothing left to watch: the sleeper does not sleep again.
        #expect(clock.totalSleeps == 1)
    }

    @Test func aShorterTimeoutWakesSoonerWithoutFiringTheLongerOne() async throws {
        let clock = ManualClock()
        let queue = IdleTimerQueue(clock: clock)
        let fired = Fired()
        let long = IdleTimer(timeout: .seconds(30), queue: queue)
        let short = IdleTimer(timeout: .seconds(1), queue: queue)
        long.start { fired.fire() }
        try await clock.waitForSleepers(1)
        short.start { fired.fire() }
        // The sleeper for 30 s is replaced by one for 1 s (the old one is cancelled).
        try await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        await fired.wait(for: 1)
        #expect(short.fired)
        #expect(!long.fired)
        // The queue sleeps on for the long one, which fires 29 s later.
        try await clock.waitForSleepers(1)
        clock.advance(by: .seconds(28))
        #expect(!long.fired)
        try await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        await fired.wait(for: 2)
        #expect(long.fired)
    }

    @Test func activityPushesTheDeadlineAndAHeldTimerWaits() async throws {
        let clock = ManualClock()
        let queue = IdleTimerQueue(clock: clock)
        let fired = Fired()
        let touched = IdleTimer(timeout: .seconds(5), queue: queue)
        let held = IdleTimer(timeout: .seconds(5), queue: queue)
        let holding = Locked(true)
        touched.start { fired.fire() }
        held.hold { holding.withLock { $0 } }
        held.start { fired.fire() }
        try await clock.waitForSleepers(1)
        clock.advance(by: .seconds(4))
        touched.touch()
        clock.advance(by: .seconds(1))
        // The sleeper looked at 5 s: neither is idle (one touched at 4 s, one held).
        try await clock.waitForSleepers(1)
        #expect(fired.value == 0)
        clock.advance(by: .seconds(4))
        await fired.wait(for: 1)
        #expect(touched.fired)
        #expect(!held.fired)
        holding.withLock { $0 = false }
        try await clock.waitForSleepers(1)
        clock.advance(by: .seconds(5))
        await fired.wait(for: 2)
        #expect(held.fired)
    }

    @Test func aTimerDroppedWithoutStoppingLeavesNothingToFire() async throws {
        let clock = ManualClock()
        let queue = IdleTimerQueue(clock: clock)
        let fired = Fired()
        let kept = IdleTimer(timeout: .seconds(5), queue: queue)
        kept.start { fired.fire() }
        do {
            let dropped = IdleTimer(timeout: .seconds(5), queue: queue)
            dropped.start { fired.fire() }
        }
        try await clock.waitForSleepers(1)
        clock.advance(by: .seconds(5))
        await fired.wait(for: 1)
        #expect(kept.fired)
        #expect(fired.value == 1)
    }
}
