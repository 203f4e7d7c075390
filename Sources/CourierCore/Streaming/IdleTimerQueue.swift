/// The one sleeper behind every ``IdleTimer`` of an ``Exchange`` (and of its copies): a task
/// that sleeps on the exchange's clock until the earliest moment any watched hop could have
/// been idle for its whole timeout, looks at each, fires the idle ones and sleeps again.
///
/// A hop's timer is an entry here, not a task: starting and stopping one takes a lock and a
/// dictionary write, and a call that ends in time never wakes a thread. The sleeper is replaced
/// only when a timer could fire before the moment it sleeps to (a shorter timeout than any
/// watched), and it ends when nothing is left to watch.
final class IdleTimerQueue: Sendable {
    private struct Entry {
        weak var timer: IdleTimer?
    }

    private struct State {
        /// The watched timers, held weakly: a call dropped with its timer leaves an empty entry.
        var timers: [ObjectIdentifier: Entry] = [:]
        /// When the sleeper wakes, as time since the queue was made; `nil` when none sleeps.
        var wake: Duration?
        /// Which sleeper is current: a replaced one finds a newer generation and leaves.
        var generation: UInt64 = 0
        var sleeper: Task<Void, Never>?
    }

    private let state = Locked(State())
    /// Time since the queue was made, on its clock.
    let elapsed: @Sendable () -> Duration
    private let sleep: @Sendable (Duration) async throws -> Void

    /// Makes a queue on `clock`; it sleeps only while a timer watches.
    init<C: Clock>(clock: C) where C.Duration == Duration {
        let start = clock.now
        elapsed = { start.duration(to: clock.now) }
        sleep = { try await CourierCore.sleep(on: clock, for: $0, as: .idleTimeout) }
    }

    deinit { state.withLock { $0.sleeper }?.cancel() }

    /// Watches `timer`, which could first fire at `deadline`.
    func add(_ timer: IdleTimer, deadline: Duration) {
        state.withLock { state in
            state.timers[ObjectIdentifier(timer)] = Entry(timer: timer)
            if let wake = state.wake, wake <= deadline { return }
            // Nothing sleeps, or it would wake too late: a new sleeper, to `deadline`.
            state.sleeper?.cancel()
            state.generation &+= 1
            state.wake = deadline
            let generation = state.generation
            // Holds the queue weakly: a queue whose exchange is gone takes its sleeper down
            // (``deinit`` cancels it).
            state.sleeper = Task { [weak self] in await self?.run(generation: generation, until: deadline) }
        }
    }

    /// Stops watching `timer`.
    ///
    /// A timer released without ``IdleTimer/stop()`` is not removed by its `deinit` (which may
    /// run while the sleeper holds this queue's lock): its entry, empty by then, goes at the
    /// sleeper's next look.
    func remove(_ timer: IdleTimer) {
        state.withLock { _ = $0.timers.removeValue(forKey: ObjectIdentifier(timer)) }
    }

    private func run(generation: UInt64, until first: Duration) async {
        var target = first
        while true {
            do { try await sleep(target - elapsed()) } catch { return }
            let now = elapsed()
            var due: [@Sendable () -> Void] = []
            let next = state.withLock { state -> Duration? in
                guard state.generation == generation else { return nil }
                var soonest: Duration?
                for (id, entry) in state.timers {
                    switch entry.timer?.check(now: now) {
                    case .idle(let action)?:
                        due.append(action)
                        state.timers[id] = nil
                    case .watching(let left)?:
                        soonest = Swift.min(soonest ?? left, left)
                    case .done?, nil:
                        state.timers[id] = nil
                    }
                }
                guard let soonest else {
                    state.wake = nil
                    state.sleeper = nil
                    return nil
                }
                state.wake = now + soonest
                return now + soonest
            }
            for action in due { action() }
            guard let next else { return }
            target = next
        }
    }
}
