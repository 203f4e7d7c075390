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
    /// Calls finished in each whole second of the run: bounded by the run's length, not by its
    /// number of calls (a soak must not grow with the traffic it measures).
    private var _perSecond: [Int] = []
    private var total = 0

    /// The longest run counted second by second: a week.
    static let longestRun: Double = 7 * 86_400

    /// An operation finished (well or not) `elapsed` seconds into the soak.
    func record(_ operation: SoakOperation, at elapsed: Double, took _: Double) {
        lock.withLock {
            _completed[operation, default: 0] += 1
            // Within a week (the array's bound); a time that is not a number counts at the start.
            let second = elapsed.isFinite ? Int(min(max(elapsed, 0), Self.longestRun)) : 0
            if second >= _perSecond.count { _perSecond += Array(repeating: 0, count: second - _perSecond.count + 1) }
            _perSecond[second] += 1
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
    var completionsPerSecond: [Int] { lock.withLock { _perSecond } }
    var completedCount: Int { lock.withLock { total } }

    /// The generation of the soak's token: each refresh makes the next.
    final class TokenGeneration: @unchecked Sendable {
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
