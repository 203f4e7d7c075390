/// Courier's ``Request/timeout``, enforced once, by the ``Exchange``, for every transport: the
/// longest wait for a hop's head or for the next bytes of its body, measured from the last
/// activity (a hop sent, upload bytes taken, a body chunk received). Time in which the network
/// is not to blame does not count: while body bytes wait unread for a slow reader (``isHeld``),
/// the wait starts again.
///
/// It runs on a `Clock` (``ContinuousClock`` unless the exchange is given another), so a test
/// drives it with ``ManualClock``. One task sleeps until the moment the transfer would have been
/// idle for the whole timeout, and only then looks.
final class IdleTimer: Sendable {
    private struct State {
        /// When the last activity was, as time since the timer was made.
        var lastActivity: Duration = .zero
        var action: (@Sendable () -> Void)?
        /// Whether the network is waiting on the reader rather than the reader on the network.
        var isHeld: (@Sendable () -> Bool)?
        var fired = false
        var stopped = false
        var watcher: Task<Void, Never>?
    }

    private let timeout: Duration
    private let state = Locked(State())
    /// Time since the timer was made, on its clock.
    private let elapsed: @Sendable () -> Duration
    private let sleep: @Sendable (Duration) async throws -> Void

    /// Makes a timer; it watches from ``start(onIdle:)``.
    /// - Parameters:
    ///   - timeout: The most time without activity.
    ///   - clock: The clock it measures on.
    init<C: Clock>(timeout: Duration, clock: C) where C.Duration == Duration {
        self.timeout = timeout
        let start = clock.now
        elapsed = { start.duration(to: clock.now) }
        sleep = { try await clock.sleep(for: $0) }
    }

    /// Whether the timer fired.
    var fired: Bool { state.withLock { $0.fired } }

    /// Starts watching; `onIdle` runs once if the timeout passes without activity (never after
    /// ``stop()``). Calling it again (the head is in: now the body is watched) replaces the
    /// action, counts as activity, and watches again if the timer had fired.
    func start(onIdle: @escaping @Sendable () -> Void) {
        let now = elapsed()
        state.withLock { state in
            guard !state.stopped else { return }
            state.fired = false
            state.action = onIdle
            state.lastActivity = now
            guard state.watcher == nil else { return }
            // The task holds the timer weakly: a call that ended and dropped its timer takes the
            // sleeping task down with it (``deinit`` cancels it). Made under the lock, so a
            // watcher that fires at once cannot be mistaken for one still watching.
            state.watcher = Task { [weak self] in await self?.watch() }
        }
    }

    /// Whether the network waits on the reader (``start(onIdle:)``'s clock does not run then).
    func hold(while isHeld: @escaping @Sendable () -> Bool) {
        state.withLock { $0.isHeld = isHeld }
    }

    /// Records activity now.
    func touch() {
        let now = elapsed()
        state.withLock { $0.lastActivity = now }
    }

    /// Stops watching for good.
    func stop() {
        let watcher = state.withLock { state -> Task<Void, Never>? in
            state.stopped = true
            state.action = nil
            state.isHeld = nil
            defer { state.watcher = nil }
            return state.watcher
        }
        watcher?.cancel()
    }

    deinit { state.withLock { $0.watcher }?.cancel() }

    private func watch() async {
        var wait = timeout
        while !Task.isCancelled {
            do { try await sleep(wait) } catch { return }
            let now = elapsed()
            let due = state.withLock { state -> (@Sendable () -> Void)?? in
                guard !state.stopped, !state.fired, let action = state.action else { return .some(nil) }
                if let isHeld = state.isHeld, isHeld() { state.lastActivity = now }
                let idle = now - state.lastActivity
                if idle < timeout {
                    wait = timeout - idle
                    return nil
                }
                state.fired = true
                state.action = nil
                state.watcher = nil
                return .some(action)
            }
            guard let due else { continue }
            due?()
            return
        }
    }
}
