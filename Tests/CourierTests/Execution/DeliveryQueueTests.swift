@testable import Courier
import Foundation
import Testing

/// The delegate queue that bounds what FoundationNetworking queues for a slow delegate: the
/// thread adding operations (libcurl's, on its session's serial work queue, in production) is held
/// while `limit` operations wait. The producer here is a serial queue of its own too: a thread of
/// the global queue would be one of Swift concurrency's two worker threads on Linux, and holding
/// it would stall every other test.
@Suite("Delivery queue")
struct DeliveryQueueTests {
    /// Adds `count` operations from a dispatch thread, each taking `work`; returns the order they
    /// ran in and the most that waited at once.
    private func deliver(count: Int, limit: Int, work: Duration) async -> (order: [Int], peak: Int) {
        let queue = DeliveryQueue(limit: limit)
        let order = Box([Int]())
        let microseconds = UInt32(work.components.attoseconds / 1_000_000_000_000)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue(label: "DeliveryQueueTests.producer").async {
                for index in 0..<count {
                    queue.addOperation {
                        usleep(microseconds)
                        order.withLock { $0.append(index) }
                    }
                }
                queue.addOperation { done.resume() }
            }
        }
        return (order.withLock { $0 }, queue.peakPending)
    }

    #if canImport(FoundationNetworking)
        @Test func aSlowDelegateHoldsTheTransportAtTheLimit() async {
            // Short operations: they run on the global queue, whose threads Swift concurrency shares.
            let (order, peak) = await deliver(count: 100, limit: 8, work: .microseconds(200))
            #expect(order == Array(0..<100))
            // The producer was held: never more than the limit (plus the one being added) waited,
            // where an ordinary queue would have had all 100 waiting at once.
            #expect(peak <= 9)
        }
    #endif

    @Test func everyOperationRunsOnceInOrder() async {
        let (order, _) = await deliver(count: 1000, limit: 64, work: .zero)
        #expect(order == Array(0..<1000))
    }

    @Test func anOperationThatAddsAnotherNeverWaitsForItself() async {
        let queue = DeliveryQueue(limit: 1)
        let ran = Box(0)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            queue.addOperation {
                // Re-entrant adds, far past the limit, from the queue's own operation.
                for _ in 0..<10 { queue.addOperation { ran.withLock { $0 += 1 } } }
                queue.addOperation { done.resume() }
            }
        }
        #expect(ran.withLock { $0 } == 10)
    }
}
