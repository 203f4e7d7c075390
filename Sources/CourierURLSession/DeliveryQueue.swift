import CourierCore
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The delegate queue of every session a ``URLSessionExecutor`` owns: runs the session's delegate
/// calls one at a time, in order, and never lets the transport get more than ``limit`` of them
/// ahead of the delegate.
///
/// FoundationNetworking reads a response with libcurl on the session's own work queue and hands
/// every chunk (16 KiB) to the delegate queue, without waiting. An ordinary queue lets those calls
/// pile up in memory, out of Courier's reach, whenever the delegate is slower than the network (a
/// loopback link, a reader spilling to a stalled disk, a gzip bomb inflating a thousandfold), and
/// a cancellation waits behind them; and a hop to another thread per chunk costs more CPU than
/// the chunk's bytes (a wake-up and a context switch each way, about a third of a fast
/// download's CPU).
///
/// So a call added while no other is queued or running runs **at once, on the thread that adds
/// it** (libcurl's, on FoundationNetworking's work queue): the delegate's work is the transport's
/// work, as it is for URLSession's own download tasks, and a delegate that takes its time (a
/// spill write to a slow disk) keeps libcurl from reading the socket meanwhile, so TCP flow
/// control slows the sender. A call added while another is queued or running (from another
/// thread) goes to a serial dispatch queue of this queue's own, behind it; the thread that adds
/// it is held while ``limit`` calls wait there.
///
/// The rule that keeps this free of deadlocks: **no call of this queue waits for the session's
/// work queue**. `URLSessionTask.cancel()`, `resume()` and `URLSession.dataTask(with:)` all do
/// (`workQueue.sync`), and so does the completion handler of an authentication challenge (it
/// cancels, suspends or resumes the task), so the delegates make those calls through
/// ``SessionCalls``, on a queue of their own. A call never waits for this queue itself (a re-entrant add is queued, never held),
/// and no wait lasts more than a second, whatever happens.
///
/// Every way to add work (a block, an operation, several, a barrier) takes the same path, so the
/// calls keep their order whatever form FoundationNetworking uses. On Apple platforms URLSession
/// does not deliver through `addOperation(_:)` the same way, and its delegate queue is left as an
/// ordinary serial `OperationQueue`.
final class DeliveryQueue: OperationQueue, @unchecked Sendable {
    // `@unchecked Sendable` is sound: `pending`, `peak` and `inlineThread` are only read or
    // written with `condition` held; `running` serializes the calls; `lane` is a dispatch queue.

    /// The most calls that may wait before the caller of `addOperation` is held.
    let limit: Int
    private let condition = NSCondition()
    /// Calls added and not yet finished (running or queued).
    private var pending = 0
    /// The most calls seen pending at once (for tests and diagnostics).
    private var peak = 0
    /// The thread running a call in place, if one is.
    private var inlineThread: pthread_t?
    /// Held while a call runs: a queued call starts only once the one running in place is done.
    private let running = NSLock()
    /// Where calls added while another is pending run, one at a time, in order.
    private let lane = DispatchQueue(label: "Courier.DeliveryQueue")
    /// Marks `lane`'s thread, so that a call adding another is known to run on this queue.
    private static let laneKey = DispatchSpecificKey<ObjectIdentifier>()

    /// Whether the platform's URLSession delivers through ``addOperation(_:)`` from its own work
    /// queue, where running the call there, or holding the caller, is safe and slows the transfer.
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
        lane.setSpecific(key: Self.laneKey, value: ObjectIdentifier(self))
    }

    /// The most delegate calls that have been pending at once so far.
    var peakPending: Int {
        condition.lock()
        defer { condition.unlock() }
        return peak
    }

    override func addOperation(_ block: @escaping @Sendable () -> Void) {
        guard Self.holdsTransport else { return super.addOperation(block) }
        let current = pthread_self()
        condition.lock()
        // Whether the caller is one of this queue's own calls (which must never wait for itself).
        let reentrant = DispatchQueue.getSpecific(key: Self.laneKey) == ObjectIdentifier(self)
            || inlineThread.map { pthread_equal($0, current) != 0 } == true
        let inPlace = pending == 0
        pending += 1
        peak = max(peak, pending)
        let full = pending > limit
        if inPlace { inlineThread = current }
        condition.unlock()
        if inPlace {
            // Nothing queued or running: this call is next, here.
            run(block, inPlace: true)
            return
        }
        lane.async { [self] in run(block, inPlace: false) }
        guard full, !reentrant else { return }
        let deadline = Date(timeIntervalSinceNow: 1)
        condition.lock()
        while pending > limit / 2, condition.wait(until: deadline) {}
        condition.unlock()
    }

    private func run(_ block: @Sendable () -> Void, inPlace: Bool) {
        running.lock()
        block()
        running.unlock()
        condition.lock()
        if inPlace { inlineThread = nil }
        pending -= 1
        // Wake a held caller once half the waiting calls are done, not after every one.
        if pending == limit / 2 { condition.broadcast() }
        condition.unlock()
    }

    override func addOperation(_ operation: Operation) {
        guard Self.holdsTransport else { return super.addOperation(operation) }
        let operation = UncheckedOperation(operation)
        addOperation { operation.value.start() }
    }

    override func addOperations(_ operations: [Operation], waitUntilFinished wait: Bool) {
        guard Self.holdsTransport else { return super.addOperations(operations, waitUntilFinished: wait) }
        for operation in operations { addOperation(operation) }
        // Never asked for by URLSession; waiting from one of this queue's calls would never end.
        if wait, DispatchQueue.getSpecific(key: Self.laneKey) != ObjectIdentifier(self) { lane.sync {} }
    }

    override func addBarrierBlock(_ barrier: @escaping @Sendable () -> Void) {
        guard Self.holdsTransport else { return super.addBarrierBlock(barrier) }
        // The calls run one at a time, in order: every call added before runs before this one.
        addOperation(barrier)
    }
}

/// An operation handed to the delivery queue, which starts it once.
private struct UncheckedOperation: @unchecked Sendable {
    // `@unchecked Sendable` is sound: the operation is touched by the delivery queue alone after
    // it is added.
    let value: Operation
    init(_ value: Operation) { self.value = value }
}
