import Foundation

/// The soak's counts, shared by its workers. `@unchecked Sendable`: every field is read and
/// written under `lock`.
final class Tally: @unchecked Sendable {
    private let lock = NSLock()
    private var _completed: [SoakOperation: Int] = [:]
    private var _injected: [String: Int] = [:]
    private var _unexpected: [String: Int] = [:]
    private var _examples: [String] = []
    private var _notes: [String: Int] = [:]
    private var _completionTimes: [Double] = []
    private var total = 0

    /// An operation finished (well or not) `elapsed` seconds into the soak.
    func record(_ operation: SoakOperation, at elapsed: Double, took _: Double) {
        lock.withLock {
            _completed[operation, default: 0] += 1
            _completionTimes.append(elapsed)
            total += 1
        }
    }

    /// An operation failed as it was meant to.
    func fail(_ operation: SoakOperation, injected errorType: String) {
        lock.withLock { _injected["\(operation.rawValue): \(errorType)", default: 0] += 1 }
    }

    /// An operation failed in a way it was not meant to.
    func fail(_ operation: SoakOperation, unexpected errorType: String, example: String) {
        lock.withLock {
            _unexpected["\(operation.rawValue): \(errorType)", default: 0] += 1
            if _examples.count < 10 { _examples.append(example) }
        }
    }

    /// Something worth reporting that is not a failure.
    func note(_ operation: SoakOperation, _ what: String) {
        lock.withLock { _notes["\(operation.rawValue): \(what)", default: 0] += 1 }
    }

    var notes: [String: Int] { lock.withLock { _notes } }
    var completed: [SoakOperation: Int] { lock.withLock { _completed } }
    var injected: [String: Int] { lock.withLock { _injected } }
    var unexpected: [String: Int] { lock.withLock { _unexpected } }
    var examples: [String] { lock.withLock { _examples } }
    var completionTimes: [Double] { lock.withLock { _completionTimes } }
    var completedCount: Int { lock.withLock { total } }

    /// A counter (the soak's token generation).
    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var value = 0

        /// Adds one and returns the new value.
        func increment() -> Int {
            lock.withLock {
                value += 1
                return value
            }
        }
    }
}
