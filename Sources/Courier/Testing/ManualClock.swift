/// A clock that only moves when told to, for testing retries, deadlines and backoff without
/// sleeping.
///
/// Sleepers wait until ``advance(by:)`` moves the clock past their deadline; cancelling a
/// sleeping task ends its sleep with `CancellationError`. ``sleepers`` tells a test how many
/// tasks are waiting, so it can advance the clock only once they are.
///
/// ```swift
/// let clock = ManualClock()
/// let retry = RetryMiddleware(policy: .init(maxAttempts: 3), clock: clock, random: .seeded(1))
/// let task = Task { try await executor.with(retry).send(resource) }
/// try await clock.waitForSleepers(1)    // bounded: throws instead of hanging
/// clock.advance(by: .seconds(1))
/// ```
public final class ManualClock: Clock, Sendable {
    /// A point in the manual clock's time: the duration since it was created.
    public struct Instant: InstantProtocol, Sendable, Hashable, Comparable {
        /// Time since the clock started.
        public var offset: Duration

        /// Creates an instant.
        /// - Parameter offset: Time since the clock started.
        public init(offset: Duration) { self.offset = offset }

        /// The instant `duration` later.
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        /// The duration from this instant to `other`.
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        var id: UInt64
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var nextID: UInt64 = 0
        var sleepers: [Sleeper] = []
        var totalSleeps = 0
    }

    private let state = Locked(State())

    /// Creates a clock at offset zero.
    public init() {}

    /// The current instant.
    public var now: Instant { state.withLock { $0.now } }

    /// The smallest step: one nanosecond.
    public var minimumResolution: Duration { .nanoseconds(1) }

    /// How many tasks are sleeping now.
    public var sleepers: Int { state.withLock { $0.sleepers.count } }

    /// How many sleeps have started since the clock was created.
    public var totalSleeps: Int { state.withLock { $0.totalSleeps } }

    /// Sleeps until the clock reaches `deadline`.
    /// - Parameters:
    ///   - deadline: When to wake.
    ///   - tolerance: Ignored.
    /// - Throws: `CancellationError` when the task is cancelled first.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            state.totalSleeps += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumeNow = state.withLock { state -> Bool in
                    if deadline <= state.now { return true }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock forward and wakes every sleeper whose deadline has come.
    /// - Parameter duration: How far to move.
    public func advance(by duration: Duration) {
        let woken = state.withLock { state -> [Sleeper] in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in woken.sorted(by: { $0.deadline < $1.deadline }) { sleeper.continuation.resume() }
    }

    /// Waits until at least `count` tasks sleep on this clock, for at most `timeout` of real
    /// time.
    ///
    /// A sleeper that never comes is the usual way a clock-driven test goes wrong: the code under
    /// test finished or gave up instead of sleeping again (a retry policy whose `deadline`, 60 s
    /// by default, passed when the clock was advanced; attempts used up; an error that is not
    /// retried). Rather than hang the test run, the wait ends with ``WaitTimeout``, which says how
    /// many tasks sleep, how many sleeps there were and what the clock reads.
    /// - Parameters:
    ///   - count: How many sleepers to wait for.
    ///   - timeout: The most real time to wait; 5 s by default.
    /// - Throws: ``WaitTimeout`` when the sleepers do not come in time; `CancellationError` when
    ///   the waiting task is cancelled.
    public func waitForSleepers(_ count: Int = 1, timeout: Duration = .seconds(5)) async throws {
        let wall = ContinuousClock()
        let giveUp = wall.now.advanced(by: timeout)
        var spins = 0
        while sleepers < count {
            try Task.checkCancellation()
            guard wall.now < giveUp else {
                let (sleeping, total, now) = state.withLock { ($0.sleepers.count, $0.totalSleeps, $0.now) }
                throw WaitTimeout(expected: count, sleeping: sleeping, totalSleeps: total, clockReading: now.offset, waited: timeout)
            }
            // Yield first (the sleeper is usually a hop away), then back off to a short real sleep.
            spins += 1
            if spins < 1000 { await Task.yield() } else { try await Task.sleep(for: .milliseconds(1)) }
        }
    }

    /// Thrown by ``waitForSleepers(_:timeout:)`` when the expected sleepers do not come.
    public struct WaitTimeout: Error, CustomStringConvertible, Sendable {
        /// How many sleepers the test waited for.
        public var expected: Int
        /// How many tasks sleep on the clock now.
        public var sleeping: Int
        /// How many sleeps have started since the clock was created.
        public var totalSleeps: Int
        /// What the manual clock reads.
        public var clockReading: Duration
        /// How long the test waited, in real time.
        public var waited: Duration

        /// What happened and the likely reasons.
        public var description: String {
            "waited \(waited) for \(expected) sleeper(s) on the ManualClock, but \(sleeping) task(s) sleep "
                + "(\(totalSleeps) sleep(s) so far; the clock reads \(clockReading)). The code under test stopped "
                + "sleeping: it finished, used up its attempts, or a deadline passed (RetryPolicy.deadline is "
                + "60 s by default, measured on this clock), so no sleeper will come."
        }
    }
}
