/// A clock that only moves when told to, for testing retries, deadlines and backoff without
/// sleeping.
///
/// Sleepers wait until ``advance(by:)`` moves the clock past their deadline; cancelling a
/// sleeping task ends its sleep with `CancellationError`. ``sleepers`` tells a test how many
/// tasks are waiting, and ``waitForSleepers(_:timeout:)`` waits until they are, so that the
/// test advances the clock only then.
///
/// Waiting for sleepers depends on progress, not on the machine's speed: the wait ends when the
/// sleepers come (it is woken by their arrival, it does not poll), and a slow, loaded or
/// sanitized run only makes it longer. Give the test a time limit
/// (`@Test(.timeLimit(.minutes(1)))`) so that code that stops sleeping fails the test instead of
/// hanging it: the wait then ends with ``WaitTimeout``, which says what the clock saw.
///
/// ```swift
/// let clock = ManualClock()
/// let retry = RetryMiddleware(policy: .init(maxAttempts: 3), clock: clock, random: .seeded(1))
/// let task = Task { try await executor.with(retry).send(resource) }
/// try await clock.waitForSleepers(1)    // woken by the sleeper's arrival
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
        var kind: SleepKind
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var nextID: UInt64 = 0
        var sleepers: [Sleeper] = []
        var totalSleeps = 0
        /// Tasks in ``waitForSleepers(_:timeout:)``, woken whenever a sleeper arrives.
        var watchers: [UInt64: UnsafeContinuation<Void, Never>] = [:]
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
        let kind = Self.currentKind ?? .unlabelled
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            state.totalSleeps += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // A task cancelled before it got here found no sleeper to end in the handler
                // below: it ends now, under the lock that the handler takes too.
                let (outcome, watchers) = state.withLock { state -> (Result<Void, any Error>?, [UnsafeContinuation<Void, Never>]) in
                    if Task.isCancelled { return (.failure(CancellationError()), []) }
                    if deadline <= state.now { return (.success(()), []) }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, kind: kind, continuation: continuation))
                    defer { state.watchers = [:] }
                    return (nil, Array(state.watchers.values))
                }
                if let outcome { continuation.resume(with: outcome) }
                for watcher in watchers { watcher.resume() }
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

    /// Waits until at least `count` tasks sleep on this clock.
    ///
    /// The wait is woken by each sleeper's arrival (it does not poll), so it takes as long as the
    /// code under test takes to get there, however slow the machine: no guess at real time is
    /// involved unless you pass `timeout`.
    ///
    /// A sleeper that never comes is the usual way a clock-driven test goes wrong: the code under
    /// test finished or gave up instead of sleeping again (a retry policy whose `deadline`, 60 s
    /// by default, passed when the clock was advanced; attempts used up; an error that is not
    /// retried). Give the test a time limit (`.timeLimit(.minutes(1))`): when it cancels the
    /// waiting task, the wait ends with ``WaitTimeout``, which says how many tasks sleep, how
    /// many sleeps there were and what the clock reads.
    /// - Parameters:
    ///   - count: How many sleepers to wait for.
    ///   - timeout: The most real time to wait, for a test that expects no sleeper to come (the
    ///     wait then proves a negative within that time); `nil` (the default) waits for as long
    ///     as it takes.
    /// - Throws: ``WaitTimeout`` when `timeout` passes or the waiting task is cancelled first.
    public func waitForSleepers(_ count: Int = 1, timeout: Duration? = nil) async throws {
        try await waitFor(count, of: nil, timeout: timeout)
    }

    /// Waits until at least `count` tasks sleep on this clock for `kind` (a retry's backoff, an
    /// attempt's limit, a stub's delay…), whatever else sleeps on it: the way to wait for the
    /// sleeper a test means when several pieces share the clock.
    ///
    /// ```swift
    /// try await clock.waitForSleepers(of: .retryBackoff)   // not the attempt timeout beside it
    /// clock.advanceToNextWakeUp(of: .retryBackoff)
    /// ```
    /// - Parameters:
    ///   - count: How many sleepers of that kind to wait for.
    ///   - kind: What they sleep for.
    ///   - timeout: The most real time to wait; `nil` (the default) waits for as long as it takes.
    /// - Throws: ``WaitTimeout`` when `timeout` passes or the waiting task is cancelled first.
    public func waitForSleepers(_ count: Int = 1, of kind: SleepKind, timeout: Duration? = nil) async throws {
        try await waitFor(count, of: kind, timeout: timeout)
    }

    /// How many tasks sleep for `kind` now.
    /// - Parameter kind: What they sleep for.
    /// - Returns: The number of sleepers.
    public func sleepers(of kind: SleepKind) -> Int {
        state.withLock { state in state.sleepers.filter { $0.kind == kind }.count }
    }

    /// When the next sleeper (of `kind`, or of any kind) wakes, or `nil` when none sleeps.
    /// - Parameter kind: What it sleeps for; `nil` for any.
    /// - Returns: The earliest deadline.
    public func nextWakeUp(of kind: SleepKind? = nil) -> Instant? {
        state.withLock { state in state.sleepers.filter { kind == nil || $0.kind == kind }.map(\.deadline).min() }
    }

    /// Moves the clock to the next wake-up (of a sleeper of `kind`, or of any), waking it and
    /// every sleeper due by then; does nothing when none sleeps.
    /// - Parameter kind: What the sleeper sleeps for; `nil` for any.
    public func advanceToNextWakeUp(of kind: SleepKind? = nil) {
        guard let deadline = nextWakeUp(of: kind) else { return }
        advance(by: max(.zero, now.duration(to: deadline)))
    }

    private func waitFor(_ count: Int, of kind: SleepKind?, timeout: Duration?) async throws {
        let wall = ContinuousClock()
        let start = wall.now
        let arrived: Bool
        if let timeout {
            arrived = await withTaskGroup(of: Bool.self) { group in
                group.addTask { await self.sleepersArrive(count, of: kind) }
                group.addTask {
                    try? await wall.sleep(for: timeout)
                    return false
                }
                defer { group.cancelAll() }
                return await group.next() ?? false
            }
        } else {
            arrived = await sleepersArrive(count, of: kind)
        }
        guard !arrived else { return }
        let (sleeping, kinds, total, now) = state.withLock { ($0.sleepers.count, $0.sleepers.map(\.kind), $0.totalSleeps, $0.now) }
        var timeout = WaitTimeout(expected: count, sleeping: sleeping, totalSleeps: total, clockReading: now.offset, waited: wall.now - start)
        timeout.kind = kind
        timeout.sleepingKinds = kinds
        throw timeout
    }

    /// How many sleepers count for a wait (those of `kind`, when given).
    private static func counted(_ state: State, of kind: SleepKind?) -> Int {
        guard let kind else { return state.sleepers.count }
        return state.sleepers.filter { $0.kind == kind }.count
    }

    /// Returns `true` once `count` tasks sleep (for `kind`, when given), `false` when the waiting
    /// task is cancelled first.
    private func sleepersArrive(_ count: Int, of kind: SleepKind?) async -> Bool {
        while true {
            let id = state.withLock { state -> UInt64? in
                guard Self.counted(state, of: kind) < count else { return nil }
                state.nextID += 1
                return state.nextID
            }
            guard let id else { return true }
            if Task.isCancelled { return false }
            await withTaskCancellationHandler {
                await withUnsafeContinuation { (watcher: UnsafeContinuation<Void, Never>) in
                    let resumeNow = state.withLock { state -> Bool in
                        if Self.counted(state, of: kind) >= count || Task.isCancelled { return true }
                        state.watchers[id] = watcher
                        return false
                    }
                    if resumeNow { watcher.resume() }
                }
            } onCancel: {
                state.withLock { $0.watchers.removeValue(forKey: id) }?.resume()
            }
        }
    }

    /// Thrown by ``waitForSleepers(_:timeout:)`` when the expected sleepers did not come: its
    /// `timeout` passed, or the waiting task was cancelled (a test's time limit).
    public struct WaitTimeout: Error, CustomStringConvertible, Sendable {
        /// How many sleepers the test waited for.
        public var expected: Int
        /// How many tasks sleep on the clock now.
        public var sleeping: Int
        /// How many sleeps have started since the clock was created.
        public var totalSleeps: Int
        /// What the manual clock reads.
        public var clockReading: Duration
        /// How long the test waited, in real time (a report, never a bound).
        public var waited: Duration
        /// The kind of sleeper waited for, when the wait named one.
        public var kind: SleepKind?
        /// What each task sleeping now sleeps for.
        public var sleepingKinds: [SleepKind] = []

        /// What happened and the likely reasons.
        public var description: String {
            "waited \(waited) for \(expected) sleeper(s)\(kind.map { " of kind \($0)" } ?? "") on the ManualClock, but "
                + "\(sleeping) task(s) sleep\(sleepingKinds.isEmpty ? "" : " (" + sleepingKinds.map(\.name).joined(separator: ", ") + ")") "
                + "(\(totalSleeps) sleep(s) so far; the clock reads \(clockReading)). The code under test stopped "
                + "sleeping: it finished, used up its attempts, or a deadline passed (RetryPolicy.deadline is "
                + "60 s by default, measured on this clock), so no sleeper will come."
        }
    }
}
