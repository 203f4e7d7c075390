import Courier
@testable import CourierCore
@testable import CourierURLSession
import Foundation
import Testing

/// The delegate queue of the URLSession executor's sessions: a call added to an idle queue runs at
/// once on the adding thread (libcurl's, in production), calls added meanwhile wait their turn in
/// order, and the adding thread is held while `limit` of them wait. The producers here are serial
/// dispatch queues of their own: a thread of the global queue would be one of Swift concurrency's
/// two worker threads on Linux, and holding or blocking it would stall every other test.
@Suite("Delivery queue")
struct DeliveryQueueTests {
    /// Adds `count` operations from a dispatch thread, each taking `work`; returns the order they
    /// ran in and the most that were pending at once.
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
        @Test func aCallAddedToAnIdleQueueRunsAtOnceOnTheAddingThread() async {
            let queue = DeliveryQueue()
            let seen = await withCheckedContinuation { (done: CheckedContinuation<(Bool, Bool), Never>) in
                DispatchQueue(label: "DeliveryQueueTests.producer").async {
                    let adder = pthread_self()
                    let ran = Box<Bool?>(nil)
                    queue.addOperation { ran.withLock { $0 = pthread_equal(adder, pthread_self()) != 0 } }
                    // Already done when `addOperation` returns: no hop, no wake-up.
                    let sameThread = ran.withLock { $0 }
                    done.resume(returning: (sameThread != nil, sameThread == true))
                }
            }
            #expect(seen.0, "the call ran before addOperation returned")
            #expect(seen.1, "on the adding thread")
        }

        @Test func callsAddedWhileOneRunsWaitInOrderAndHoldTheirProducerAtTheLimit() async {
            let queue = DeliveryQueue(limit: 8)
            let order = Box([Int]())
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                let first = DispatchSemaphore(value: 0)
                // Producer 1: a slow call, run in place on its thread.
                DispatchQueue(label: "DeliveryQueueTests.slow").async {
                    queue.addOperation {
                        first.signal()
                        usleep(100_000)
                        order.withLock { $0.append(-1) }
                    }
                }
                // Producer 2 (another thread): 100 short calls while the slow one runs.
                DispatchQueue(label: "DeliveryQueueTests.fast").async {
                    first.wait()
                    for index in 0..<100 {
                        queue.addOperation {
                            usleep(200)
                            order.withLock { $0.append(index) }
                        }
                    }
                    queue.addOperation { done.resume() }
                }
            }
            // The slow call finished before any queued one started, and those ran in order.
            #expect(order.withLock { $0 } == [-1] + Array(0..<100))
            // The producer was held: never more than the limit (plus the running call and the one
            // being added) were pending, where an ordinary queue would have had all 101 at once.
            #expect(queue.peakPending <= 10)
        }
    #endif

    @Test func everyOperationRunsOnceInOrder() async {
        let (order, _) = await deliver(count: 1000, limit: 64, work: .zero)
        #expect(order == Array(0..<1000))
    }

    @Test func callsFromSeveralThreadsNeverOverlapAndKeepEachThreadsOrder() async {
        let queue = DeliveryQueue(limit: 4)
        let state = Box((active: 0, overlapped: false, seen: [[Int]](repeating: [], count: 4)))
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let group = DispatchGroup()
            for producer in 0..<4 {
                group.enter()
                DispatchQueue(label: "DeliveryQueueTests.producer\(producer)").async {
                    for index in 0..<300 {
                        queue.addOperation {
                            state.withLock { state in
                                state.active += 1
                                if state.active > 1 { state.overlapped = true }
                            }
                            if index % 50 == 0 { usleep(1_000) }
                            state.withLock { state in
                                state.active -= 1
                                state.seen[producer].append(index)
                            }
                        }
                    }
                    group.leave()
                }
            }
            group.notify(queue: DispatchQueue(label: "DeliveryQueueTests.end")) {
                queue.addOperation { done.resume() }
            }
        }
        let final = state.withLock { $0 }
        #expect(!final.overlapped)
        #expect(final.seen == [[Int]](repeating: Array(0..<300), count: 4))
    }

    @Test func operationsAndBarriersKeepTheirPlaceAmongBlocks() async {
        let queue = DeliveryQueue()
        let order = Box([String]())
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue(label: "DeliveryQueueTests.producer").async {
                queue.addOperation {
                    usleep(10_000)
                    order.withLock { $0.append("block") }
                }
                queue.addOperation(BlockOperation { order.withLock { $0.append("operation") } })
                queue.addOperations([BlockOperation { order.withLock { $0.append("batch") } }], waitUntilFinished: false)
                queue.addBarrierBlock { order.withLock { $0.append("barrier") } }
                queue.addOperation { done.resume() }
            }
        }
        #expect(order.withLock { $0 } == ["block", "operation", "batch", "barrier"])
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
