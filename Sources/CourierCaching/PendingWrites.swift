import CourierCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Stores in flight, by key: a lookup waits for the writes to its key, so a response read to
/// its end is in the cache for the next request. Each write forgets itself when done.
final class PendingWrites: Sendable {
    private struct State {
        var next = 0
        var tasks: [String: [Int: Task<Void, Never>]] = [:]
    }

    private let state = Locked(State())

    /// Runs `work` as a task of its own, recorded under `key` until it ends.
    func run(for key: String, _ work: @escaping @Sendable () async -> Void) {
        state.withLock { state in
            let id = state.next
            state.next += 1
            // The task's own removal takes this lock, so it cannot run before the task is recorded.
            state.tasks[key, default: [:]][id] = Task {
                await work()
                self.finished(id, key: key)
            }
        }
    }

    private func finished(_ id: Int, key: String) {
        state.withLock { state in
            state.tasks[key]?[id] = nil
            if state.tasks[key]?.isEmpty == true { state.tasks[key] = nil }
        }
    }

    /// Waits for the writes to `key` under way now.
    func wait(for key: String) async {
        let pending = state.withLock { Array(($0.tasks[key] ?? [:]).values) }
        for task in pending { await task.value }
    }
}
