import Courier
import Foundation
import Testing

@Suite("Concurrency limit and de-duplication")
struct LimitAndDedupTests {
    /// An executor whose requests block until released, counting how many run at once.
    final class Gated: Sendable {
        let running = Box(0)
        let peak = Box(0)
        let order = Box([Int]())
        let release = Box([CheckedContinuation<Void, Never>]())

        func executor() -> InMemoryExecutor {
            InMemoryExecutor { request in
                let now = self.running.withLock { running -> Int in
                    running += 1
                    return running
                }
                self.peak.withLock { $0 = max($0, now) }
                self.order.withLock { $0.append(Int(request.queryItems.first?.value ?? "") ?? -1) }
                await withCheckedContinuation { continuation in self.release.withLock { $0.append(continuation) } }
                self.running.withLock { $0 -= 1 }
                return .text(request.queryItems.first?.value ?? "")
            }
        }

        /// Waits until `count` requests are blocked, then releases them.
        func releaseWhenBlocked(_ count: Int) async {
            await waitUntil { release.withLock { $0.count } >= count }
            let waiting = release.withLock { release -> [CheckedContinuation<Void, Never>] in
                defer { release.removeAll() }
                return release
            }
            for continuation in waiting { continuation.resume() }
        }

        /// Waits until `count` requests are blocked, then releases the one that entered first.
        func releaseOldestWhenBlocked(_ count: Int) async {
            await waitUntil { release.withLock { $0.count } >= count }
            release.withLock { $0.removeFirst() }.resume()
        }
    }

    private func item(_ index: Int) -> Resource<String> {
        Request.get |> baseURL(api) |> path("items") |> query("i", index) |> decodeText()
    }

    @Test func limitKeepsAtMostNInFlightInArrivalOrder() async throws {
        let gated = Gated()
        let limit = ConcurrencyLimitMiddleware(limit: 2)
        let executor = gated.executor().with(limit)
        let results = Box([String]())
        let senders = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<6 {
                    group.addTask {
                        let value = try await executor.send(self.item(index))
                        results.withLock { $0.append(value) }
                    }
                    // Let each arrive before the next is sent, so arrival order is known. Not
                    // after the last: once all six are in, the test starts releasing and the
                    // count falls again, so a look that came late would wait for ever.
                    if index < 5 { await waitUntil { limit.inFlight + limit.waiting >= index + 1 } }
                }
                try await group.waitForAll()
            }
        }
        // Release nothing until all six have arrived: two running, four queued.
        await waitUntil { limit.inFlight == 2 && limit.waiting == 4 }
        // One at a time: each release frees one slot for exactly one waiter, so the order the
        // handler sees is the order the gate granted.
        for step in 0..<6 { await gated.releaseOldestWhenBlocked(min(2, 6 - step)) }
        try await senders.value
        #expect(gated.peak.withLock { $0 } == 2)
        #expect(gated.order.withLock { $0 } == [0, 1, 2, 3, 4, 5])
        let count: Int = results.withLock { $0.count }
        #expect(count == 6)
        #expect(limit.inFlight == 0)
    }

    @Test func cancelledWaiterLeavesTheQueue() async throws {
        let gated = Gated()
        let limit = ConcurrencyLimitMiddleware(limit: 1)
        let executor = gated.executor().with(limit)
        let first = Task { try await executor.send(item(1)) }
        await waitUntil { gated.release.withLock { $0.count } >= 1 }
        let second = Task { try await executor.send(item(2)) }
        await waitUntil { limit.waiting >= 1 }
        second.cancel()
        let secondResult = await second.result
        guard case .failure(let error as CourierError) = secondResult, case .cancelled = error.cause else {
            Issue.record("unexpected \(secondResult)")
            return
        }
        #expect(limit.waiting == 0)
        await gated.releaseWhenBlocked(1)
        #expect(try await first.value == "1")
        #expect(limit.inFlight == 0)
        // The slot is free again.
        let third = Task { try await executor.send(item(3)) }
        await gated.releaseWhenBlocked(1)
        #expect(try await third.value == "3")
    }

    /// A task cancelled before it asks for a slot leaves at once with `CancellationError` and
    /// sends nothing: it was queued and waited for a slot to free (for ever, here, where the
    /// slot is released only after it leaves).
    @Test(.timeLimit(.minutes(1))) func aTaskCancelledBeforeItAsksForASlotLeavesAtOnce() async throws {
        let gated = Gated()
        let limit = ConcurrencyLimitMiddleware(limit: 1)
        let server = gated.executor()
        let first = Task { try await server.with(limit).send(item(1)) }
        await waitUntil { gated.release.withLock { $0.count } >= 1 }
        // Straight into the middleware, past `send`'s own cancellation check.
        let request = item(2).request
        let late = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await limit.intercept(request) { try await server.execute($0, options: .buffered) }
        }
        await #expect(throws: CancellationError.self) { _ = try await late.value }
        #expect(limit.waiting == 0)
        await gated.releaseWhenBlocked(1)
        #expect(try await first.value == "1")
        #expect(server.requests.count == 1)
        #expect(limit.inFlight == 0)
    }

    @Test func identicalGetsShareOneResponse() async throws {
        let gated = Gated()
        let server = gated.executor()
        let dedup = DeduplicationMiddleware()
        let executor = server.with(dedup)
        let tasks = (0..<5).map { _ in Task { try await executor.send(item(7)) } }
        // All five in: one sending, four waiting for it (one that came after it ended would
        // send again and wait for a release that never comes).
        await waitUntil { dedup.waiting == 4 }
        await gated.releaseWhenBlocked(1)
        for task in tasks { #expect(try await task.value == "7") }
        #expect(server.requests.count == 1)
        #expect(dedup.inFlight == 0)
    }

    @Test func differentRequestsAreNotShared() async throws {
        let gated = Gated()
        let server = gated.executor()
        let executor = server.with(DeduplicationMiddleware())
        let a = Task { try await executor.send(item(1)) }
        let b = Task { try await executor.send(item(2)) }
        let c = Task { try await executor.send(item(1) |> { $0.applying(bearer("other-user")) }) }
        await gated.releaseWhenBlocked(3)
        #expect(try await [a.value, b.value, c.value] == ["1", "2", "1"])
        #expect(server.requests.count == 3)
    }

    @Test func postsAreNeverShared() async throws {
        let server = InMemoryExecutor { _ in .status(201) }
        let executor = server.with(DeduplicationMiddleware())
        async let a = executor.send(Request.post |> baseURL(api) |> json(["x": 1]))
        async let b = executor.send(Request.post |> baseURL(api) |> json(["x": 1]))
        _ = try await (a, b)
        #expect(server.requests.count == 2)
    }

    @Test func errorsAreSharedToo() async throws {
        let gated = Gated()
        let server = InMemoryExecutor { request in
            await withCheckedContinuation { continuation in gated.release.withLock { $0.append(continuation) } }
            return .failure(URLError(.cannotConnectToHost))
        }
        let dedup = DeduplicationMiddleware()
        let executor = server.with(dedup)
        let tasks = (0..<3).map { _ in Task { try await executor.send(item(1)) } }
        await waitUntil { dedup.waiting == 2 }
        await gated.releaseWhenBlocked(1)
        for task in tasks {
            let result = await task.result
            guard case .failure(let error as CourierError) = result, case .transport = error.cause else {
                Issue.record("unexpected \(result)")
                continue
            }
        }
        #expect(server.requests.count == 1)
    }

    @Test func cancelledFollowerStopsWaitingAndOthersStillGetTheResponse() async throws {
        let gated = Gated()
        let server = gated.executor()
        let dedup = DeduplicationMiddleware()
        let executor = server.with(dedup)
        let leader = Task { try await executor.send(item(5)) }
        await waitUntil { gated.release.withLock { $0.count } >= 1 }
        let follower = Task { try await executor.send(item(5)) }
        await waitUntil { dedup.waiting == 1 }
        follower.cancel()
        let followerResult = await follower.result
        guard case .failure = followerResult else {
            Issue.record("the cancelled follower should fail")
            return
        }
        await gated.releaseWhenBlocked(1)
        #expect(try await leader.value == "5")
        #expect(server.requests.count == 1)
    }

    /// A caller cancelled before it joins a shared request leaves at once: it waited for the
    /// request it joined to end.
    @Test(.timeLimit(.minutes(1))) func aCallerCancelledBeforeItJoinsLeavesAtOnce() async throws {
        let gated = Gated()
        let server = gated.executor()
        let dedup = DeduplicationMiddleware()
        let leader = Task { try await server.with(dedup).send(item(5)) }
        await waitUntil { gated.release.withLock { $0.count } >= 1 }
        // Straight into the middleware, past `send`'s own cancellation check.
        let request = item(5).request
        let late = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await dedup.intercept(request) { try await server.execute($0, options: .buffered) }
        }
        await #expect(throws: CancellationError.self) { _ = try await late.value }
        await gated.releaseWhenBlocked(1)
        #expect(try await leader.value == "5")
        #expect(server.requests.count == 1)
    }

    @Test func followersTakeOverWhenTheLeaderIsCancelled() async throws {
        let gated = Gated()
        let server = gated.executor()
        let dedup = DeduplicationMiddleware()
        let executor = server.with(dedup)
        let leader = Task { try await executor.send(item(9)) }
        await waitUntil { gated.release.withLock { $0.count } >= 1 }
        let follower = Task { try await executor.send(item(9)) }
        await waitUntil { dedup.waiting == 1 }
        leader.cancel()
        await gated.releaseWhenBlocked(1)
        _ = await leader.result
        await gated.releaseWhenBlocked(1)
        #expect(try await follower.value == "9")
        #expect(server.requests.count == 2)
    }
}

extension Resource {
    /// Applies a request change to a resource, for tests.
    static func |> (resource: Resource, change: (Request) -> Request) -> Resource {
        Resource(request: change(resource.request), decoder: resource.decoder)
    }
}
