/// A `Clock` with its type erased: the time since it was first read, and a sleep on it. Lets a
/// middleware take any clock (a ``ManualClock`` in tests) without being generic over it, so that
/// its type can be named as it is: `RetryMiddleware`, not `RetryMiddleware<ContinuousClock>`.
package struct ElapsedClock: Sendable {
    private let read: @Sendable () -> Duration
    private let wait: @Sendable (Duration, ManualClock.SleepKind) async throws -> Void

    /// - Parameter clock: The clock to read and sleep on.
    package init(_ clock: some Clock<Duration>) {
        let origin = clock.now
        read = { origin.duration(to: clock.now) }
        wait = { delay, kind in try await CourierCore.sleep(on: clock, for: delay, as: kind) }
    }

    /// The time since this value was made, on its clock.
    package var now: Duration { read() }

    /// Sleeps for `delay` on the clock, labelled `kind` on a ``ManualClock``.
    package func sleep(for delay: Duration, as kind: ManualClock.SleepKind) async throws { try await wait(delay, kind) }
}
