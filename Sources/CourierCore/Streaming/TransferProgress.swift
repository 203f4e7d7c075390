#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// How far an upload or download has come, observable as an `AsyncSequence`.
///
/// Create one, pass it to ``Executor/download(_:to:options:)`` or
/// ``StreamOptions/uploadProgress``, and read ``updates`` from any number of tasks, before or
/// after the transfer starts:
///
/// ```swift
/// let progress = TransferProgress()
/// Task { for await p in progress.updates { print(p.fractionCompleted ?? 0) } }
/// try await executor.download(request, to: file, options: DownloadOptions(progress: progress))
/// ```
///
/// Every reader sees the state as it is when it starts reading, then each change, and always the
/// final state: nothing is lost, whenever a reader subscribes. Readers slower than the transfer
/// get the latest state rather than every intermediate one (each ``Snapshot`` is cumulative), so
/// memory stays constant however many chunks go by.
public final class TransferProgress: Sendable {
    /// The state of a transfer at one moment.
    public struct Snapshot: Sendable, Hashable, CustomStringConvertible {
        /// Bytes transferred so far.
        public var completed: Int64
        /// The total, when known (from `Content-Length`, or the size of the file being sent).
        public var expected: Int64?
        /// Whether the transfer has ended (successfully or not).
        public var isFinished: Bool

        /// Creates a snapshot.
        /// - Parameters:
        ///   - completed: Bytes transferred so far.
        ///   - expected: The total, when known.
        ///   - isFinished: Whether the transfer has ended.
        public init(completed: Int64, expected: Int64?, isFinished: Bool = false) {
            self.completed = completed
            self.expected = expected
            self.isFinished = isFinished
        }

        /// `completed / expected` in 0...1, or `nil` when the total is unknown.
        public var fractionCompleted: Double? {
            guard let expected, expected > 0 else { return expected == 0 ? 1 : nil }
            return min(1, max(0, Double(completed) / Double(expected)))
        }

        /// For example `512 of 1024 bytes` or `2048 bytes (finished)`.
        public var description: String {
            var text = expected.map { "\(completed) of \($0) bytes" } ?? "\(completed) bytes"
            if isFinished { text += " (finished)" }
            return text
        }
    }

    private struct State {
        var snapshot = Snapshot(completed: 0, expected: nil)
        var version = 0
        var waiters: [UInt64: (after: Int, continuation: UnsafeContinuation<Void, Never>)] = [:]
        var nextWaiter: UInt64 = 0
    }

    private let state = Locked(State())

    /// Creates a progress reporter at zero bytes.
    public init() { relay = nil }

    /// Passes every change on to `target` as well, and calls `activity` for each: how the
    /// ``Exchange`` counts upload bytes as activity for the idle timer.
    private let relay: (target: TransferProgress?, activity: @Sendable () -> Void)?

    init(relayingTo target: TransferProgress?, activity: @escaping @Sendable () -> Void) {
        relay = (target, activity)
    }

    /// The state now.
    public var current: Snapshot { state.withLock { $0.snapshot } }

    /// Records that `completed` bytes of `expected` are done.
    /// - Parameters:
    ///   - completed: Bytes transferred so far.
    ///   - expected: The total, when known; `nil` keeps the total known so far.
    public func update(completed: Int64, expected: Int64? = nil) {
        change { snapshot in
            guard !snapshot.isFinished else { return false }
            snapshot.completed = completed
            if let expected { snapshot.expected = expected }
            return true
        }
        if let relay {
            relay.target?.update(completed: completed, expected: expected)
            relay.activity()
        }
    }

    /// Records that the transfer has ended; readers' sequences end after this state.
    public func finish() {
        change { snapshot in
            guard !snapshot.isFinished else { return false }
            snapshot.isFinished = true
            return true
        }
        relay?.target?.finish()
    }

    private func change(_ body: (inout Snapshot) -> Bool) {
        let woken = state.withLock { state -> [UnsafeContinuation<Void, Never>] in
            guard body(&state.snapshot) else { return [] }
            state.version += 1
            let waiting = state.waiters.values.map(\.continuation)
            state.waiters = [:]
            return waiting
        }
        for continuation in woken { continuation.resume() }
    }

    /// The states, from the current one to the final one.
    public var updates: Updates { Updates(progress: self) }

    /// The states of a transfer, as they change.
    public struct Updates: AsyncSequence, Sendable {
        /// A state.
        public typealias Element = Snapshot
        let progress: TransferProgress

        /// Creates the iterator.
        public func makeAsyncIterator() -> Iterator { Iterator(progress: progress) }

        /// Reads the states.
        public struct Iterator: AsyncIteratorProtocol {
            let progress: TransferProgress
            var seen = -1
            var done = false

            /// The next state, or `nil` after the final one (or when the reading task is
            /// cancelled).
            public mutating func next() async -> Snapshot? {
                guard !done else { return nil }
                while true {
                    let seen = self.seen
                    let ready = progress.state.withLock { state -> (Snapshot, Int)? in
                        state.version > seen ? (state.snapshot, state.version) : nil
                    }
                    if let (snapshot, version) = ready {
                        self.seen = version
                        done = snapshot.isFinished
                        return snapshot
                    }
                    if Task.isCancelled { return nil }
                    await progress.wait(after: seen)
                }
            }
        }
    }

    private func wait(after version: Int) async {
        let id = state.withLock { state -> UInt64 in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.version > version || Task.isCancelled { return true }
                    state.waiters[id] = (version, continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiting = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiting?.continuation.resume()
        }
    }
}
