import Foundation

/// Enforces a sub-second ``Request/timeout`` exactly, for every kind of transfer (buffered,
/// streamed, uploaded, downloaded): FoundationNetworking's own timer counts whole seconds only
/// (see ``Request/needsExactTimeoutWatchdog``), so the executor watches the transfer itself,
/// with the same meaning: time without activity (a chunk received, body bytes sent, a new hop),
/// reset by each.
///
/// The check runs on a global dispatch queue, never on a Swift concurrency thread, and at most
/// once per `limit`: it sleeps until the moment the transfer would be idle for `limit`.
final class IdleWatchdog: Sendable {
    private struct State {
        var last = DispatchTime.now().uptimeNanoseconds
        var stopped = false
        var onIdle: (@Sendable () -> Void)?
    }

    private let state = Locked(State())
    private let limit: UInt64

    /// Makes a watchdog; it watches from ``start(onIdle:)``.
    /// - Parameter limit: The most seconds without activity.
    init(limit: TimeInterval) {
        self.limit = UInt64(max(0.001, limit) * 1e9)
    }

    /// Makes a watchdog when `request` needs one (its timeout is not a whole number of seconds
    /// on FoundationNetworking), otherwise `nil`.
    static func forRequest(_ request: Request) -> IdleWatchdog? {
        guard request.needsExactTimeoutWatchdog, let timeout = request.effectiveTimeout else { return nil }
        return IdleWatchdog(limit: timeout)
    }

    /// Starts watching.
    /// - Parameter onIdle: Called once, when the limit passes without activity (not after
    ///   ``stop()``).
    func start(onIdle: @escaping @Sendable () -> Void) {
        state.withLock { state in
            state.onIdle = onIdle
            state.last = DispatchTime.now().uptimeNanoseconds
        }
        schedule(after: limit)
    }

    /// Records activity now.
    func touch() {
        let now = DispatchTime.now().uptimeNanoseconds
        state.withLock { $0.last = now }
    }

    /// Stops watching: the transfer ended.
    func stop() {
        state.withLock { state in
            state.stopped = true
            state.onIdle = nil
        }
    }

    private func schedule(after nanoseconds: UInt64) {
        // Weak: a transfer that ended and was released takes its watchdog with it.
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(min(nanoseconds, UInt64(Int.max))))) {
            [weak self] in self?.check()
        }
    }

    private func check() {
        let now = DispatchTime.now().uptimeNanoseconds
        let idle = state.withLock { state -> UInt64? in
            guard !state.stopped else { return nil }
            return now >= state.last ? now - state.last : 0
        }
        guard let idle else { return }
        if idle >= limit {
            let onIdle = state.withLock { state -> (@Sendable () -> Void)? in
                defer {
                    state.stopped = true
                    state.onIdle = nil
                }
                return state.stopped ? nil : state.onIdle
            }
            onIdle?()
        } else {
            schedule(after: limit - idle)
        }
    }
}
