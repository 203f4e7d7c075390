import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The delegate queue of every session a ``URLSessionExecutor`` owns: runs the session's delegate
/// calls one at a time, in order, and never lets the transport get more than ``limit`` of them
/// ahead of the delegate.
///
/// FoundationNetworking reads a response with libcurl on the session's own work queue and hands
/// every chunk (16 KiB) to the delegate queue as an operation, without waiting. When the delegate
/// is slower than the network (a loopback link, a reader spilling to a stalled disk, a gzip bomb
/// inflating a thousandfold), those operations pile up in memory out of Courier's reach, and a
/// cancellation waits behind them. This queue holds the thread that adds an operation (libcurl's,
/// on FoundationNetworking's work queue: never a Swift concurrency thread) while ``limit``
/// operations are waiting: libcurl stops reading the socket meanwhile, so TCP flow control slows
/// the sender, and what waits between the network and the delegate stays under ``limit`` chunks.
///
/// The rule that keeps this free of deadlocks: **no operation of this queue waits for the
/// session's work queue**. `URLSessionTask.cancel()`, `resume()` and `URLSession.dataTask(with:)`
/// all do (`workQueue.sync`), so the delegates make those calls through ``SessionCalls``, on a
/// queue of their own. A re-entrant `addOperation` (from one of this queue's own operations) never
/// waits, and no wait lasts more than a second, whatever happens.
///
/// On Apple platforms URLSession does not deliver through `addOperation(_:)` the same way, and its
/// delegate queue is left as an ordinary serial `OperationQueue`.
final class DeliveryQueue: OperationQueue, @unchecked Sendable {
    // `@unchecked Sendable` is sound: `pending` is only read or written with `condition` held.

    /// The most operations that may wait before the caller of `addOperation` is held.
    let limit: Int
    private let condition = NSCondition()
    private var pending = 0
    /// The most operations seen waiting at once (for tests and diagnostics).
    private var peak = 0

    /// Whether the platform's URLSession delivers through ``addOperation(_:)`` from its own work
    /// queue, where holding the caller is safe and slows the transfer.
    static let holdsTransport: Bool = {
        #if canImport(FoundationNetworking)
            true
        #else
            false
        #endif
    }()

    /// Creates a serial queue.
    /// - Parameter limit: The most delegate calls that may wait; 64 by default (about 1 MiB of
    ///   chunks).
    init(limit: Int = 64) {
        self.limit = max(1, limit)
        super.init()
        maxConcurrentOperationCount = 1
        name = "Courier.DeliveryQueue"
    }

    /// The most delegate calls that have waited at once so far.
    var peakPending: Int {
        condition.lock()
        defer { condition.unlock() }
        return peak
    }

    override func addOperation(_ block: @escaping @Sendable () -> Void) {
        guard Self.holdsTransport else { return super.addOperation(block) }
        condition.lock()
        pending += 1
        peak = max(peak, pending)
        let full = pending > limit
        condition.unlock()
        super.addOperation { [self] in
            block()
            condition.lock()
            pending -= 1
            // Wake the transport once half the waiting calls are done, not after every one.
            if pending == limit / 2 { condition.broadcast() }
            condition.unlock()
        }
        // One of this queue's own operations adding another must never wait for itself.
        guard full, OperationQueue.current !== self else { return }
        let deadline = Date(timeIntervalSinceNow: 1)
        condition.lock()
        while pending > limit / 2, condition.wait(until: deadline) {}
        condition.unlock()
    }
}
