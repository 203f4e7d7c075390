/// Courier's ``Request/timeout``, enforced once, by the ``Exchange``, for every transport: the
/// longest wait for a hop's head or for the next bytes of its body, measured from the last
/// activity (a hop sent, upload bytes taken, a body chunk received). Time in which the network
/// is not to blame does not count: while body bytes wait unread for a slow reader (``hold(while:)``),
/// the wait starts again.
///
/// It runs on the exchange's `Clock` (``ContinuousClock`` unless the exchange is given another),
/// so a test drives it with ``ManualClock``. A timer is an entry in its exchange's
/// ``IdleTimerQueue``, whose one sleeper looks only when a timer could have been idle for its
/// whole timeout: watching a hop costs no task of its own.
final class IdleTimer: Sendable {
    private struct State {
        /// When the last activity was, on the queue's time line.
        var lastActivity: Duration = .zero
        var action: (@Sendable () -> Void)?
        /// Whether the network is waiting on the reader rather than the reader on the network.
        var isHeld: (@Sendable () -> Bool)?
        var fired = false
        var stopped = false
        /// Whether the queue watches this timer.
        var queued = false
    }

    /// What the queue finds when it looks at a timer.
    enum Check {
        /// Idle for the whole timeout: the action to run (the timer has fired).
        case idle(@Sendable () -> Void)
        /// Still watching; it could fire this much later.
        case watching(Duration)
        /// Stopped or fired: nothing to watch.
        case done
    }

    let timeout: Duration
    private let state = Locked(State())
    private let queue: IdleTimerQueue

    /// Makes a timer on `queue`; it watches from ``start(onIdle:)``.
    /// - Parameters:
    ///   - timeout: The most time without activity.
    ///   - queue: The queue whose sleeper watches it.
    init(timeout: Duration, queue: IdleTimerQueue) {
        self.timeout = timeout
        self.queue = queue
    }

    /// Whether the timer fired.
    var fired: Bool { state.withLock { $0.fired } }

    /// Starts watching; `onIdle` runs once if the timeout passes without activity (never after
    /// ``stop()``). Calling it again (the head is in: now the body is watched) replaces the
    /// action, counts as activity, and watches again if the timer had fired.
    func start(onIdle: @escaping @Sendable () -> Void) {
        let now = queue.elapsed()
        let enqueue = state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            state.fired = false
            state.action = onIdle
            state.lastActivity = now
            defer { state.queued = true }
            return !state.queued
        }
        if enqueue { queue.add(self, deadline: now + timeout) }
    }

    /// Whether the network waits on the reader (``start(onIdle:)``'s clock does not run then).
    func hold(while isHeld: @escaping @Sendable () -> Bool) {
        state.withLock { $0.isHeld = isHeld }
    }

    /// Records activity now.
    func touch() {
        let now = queue.elapsed()
        state.withLock { $0.lastActivity = now }
    }

    /// Stops watching for good.
    func stop() {
        let queued = state.withLock { state -> Bool in
            state.stopped = true
            state.action = nil
            state.isHeld = nil
            defer { state.queued = false }
            return state.queued
        }
        if queued { queue.remove(self) }
    }

    /// Looks at the timer at `now` (called by the queue, under its lock): fires it if it has been
    /// idle for the whole timeout.
    func check(now: Duration) -> Check {
        state.withLock { state in
            guard !state.stopped, !state.fired, let action = state.action else {
                state.queued = false
                return .done
            }
            if let isHeld = state.isHeld, isHeld() { state.lastActivity = now }
            let idle = now - state.lastActivity
            if idle < timeout { return .watching(timeout - idle) }
            state.fired = true
            state.action = nil
            state.queued = false
            return .idle(action)
        }
    }
}
