import NIOConcurrencyHelpers

/// Courier's ``Request/timeout`` on AsyncHTTPClient: the longest wait for a head or for the next
/// body bytes, measured from the last activity. Fires its action once when that wait is exceeded;
/// time spent waiting for a slow *reader* (backpressure) does not count.
///
/// AsyncHTTPClient's own read timeout is per client and its deadline ends at the head; this is
/// per request and covers the body.
final class IdleTimer: Sendable {
    private struct State {
        var lastActivity: ContinuousClock.Instant
        /// The pump is waiting for the reader: the network is not idle, Courier is.
        var paused = false
        var action: (@Sendable () -> Void)?
        var fired = false
    }

    private let timeout: Duration
    private let state: NIOLockedValueBox<State>
    private let clock = ContinuousClock()
    private let watcher: NIOLockedValueBox<Task<Void, Never>?> = NIOLockedValueBox(nil)

    /// Starts watching; `action` runs once if `timeout` passes without activity.
    init(timeout: Duration, action: @escaping @Sendable () -> Void) {
        self.timeout = timeout
        self.state = NIOLockedValueBox(State(lastActivity: clock.now, action: action))
        let task = Task { [weak self] in
            guard let self else { return }
            await self.watch()
        }
        watcher.withLockedValue { $0 = task }
    }

    deinit { watcher.withLockedValue { $0?.cancel() } }

    /// Replaces what happens when the timer fires (the head is in: now the body pump stops).
    func retarget(_ action: @escaping @Sendable () -> Void) {
        state.withLockedValue { $0.action = action }
    }

    /// Records activity.
    func touch() {
        state.withLockedValue { $0.lastActivity = clock.now }
    }

    /// Stops counting while the pump waits for the reader; ``resume()`` starts a fresh wait.
    func pause() {
        state.withLockedValue { $0.paused = true }
    }

    /// Counts again, from now.
    func resume() {
        state.withLockedValue {
            $0.paused = false
            $0.lastActivity = clock.now
        }
    }

    /// Stops watching for good.
    func stop() {
        state.withLockedValue { $0.action = nil }
        watcher.withLockedValue { $0?.cancel() }
    }

    private func watch() async {
        var wake = clock.now.advanced(by: timeout)
        while !Task.isCancelled {
            do { try await clock.sleep(until: wake) } catch { return }
            let due = state.withLockedValue { state -> (@Sendable () -> Void)?? in
                if state.fired || state.action == nil { return .some(nil) }
                let next = state.lastActivity.advanced(by: timeout)
                if state.paused || next > clock.now {
                    wake = state.paused ? clock.now.advanced(by: timeout) : next
                    return nil
                }
                state.fired = true
                return .some(state.action)
            }
            guard let due else { continue }
            due?()
            return
        }
    }
}
