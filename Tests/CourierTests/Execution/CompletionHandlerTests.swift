import Courier
import Foundation
import Testing

@Suite("Completion handlers and callback executor")
struct CompletionHandlerTests {
    private let resource = Request.get |> baseURL(api) |> path("users") |> decode([User].self)

    /// Collects completion calls.
    final class Calls: Sendable {
        private let results = Box([Result<[User], CourierError>]())
        func append(_ result: Result<[User], CourierError>) { results.withLock { $0.append(result) } }
        var all: [Result<[User], CourierError>] { results.withLock { $0 } }
    }

    @Test func completionIsCalledOnceWithTheValue() async throws {
        let executor = InMemoryExecutor { _ in .json([User(id: 1, name: "a")]) }
        let calls = Calls()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            executor.send(resource) { result in
                calls.append(result)
                done.resume()
            }
        }
        try await Task.sleep(for: .milliseconds(20))
        #expect(calls.all.count == 1)
        #expect(try calls.all.first?.get() == [User(id: 1, name: "a")])
    }

    @Test func completionReportsErrors() async throws {
        let executor = InMemoryExecutor { _ in .status(500) }
        let result = await withCheckedContinuation { (done: CheckedContinuation<Result<[User], CourierError>, Never>) in
            executor.send(resource) { done.resume(returning: $0) }
        }
        guard case .failure(let error) = result, case .unacceptableStatus(500, _) = error.cause else {
            Issue.record("unexpected \(result)")
            return
        }
    }

    @Test func cancellingCallsCompletionOnceWithCancelled() async throws {
        let executor = InMemoryExecutor { _ in .json([User]()).delayed(by: .seconds(30)) }
        let calls = Calls()
        let handle = executor.send(resource) { calls.append($0) }
        await waitUntil { executor.requests.count == 1 }
        handle.cancel()
        handle.cancel()
        // Called once; a second call would come at once too (a moment to let it show).
        await waitUntil { !calls.all.isEmpty }
        try await Task.sleep(for: .milliseconds(20))
        #expect(handle.isCancelled)
        #expect(calls.all.count == 1)
        guard case .failure(let error) = calls.all.first, case .cancelled = error.cause else {
            Issue.record("unexpected \(calls.all)")
            return
        }
    }

    @Test func cancellingAfterCompletionDoesNothing() async throws {
        let executor = InMemoryExecutor { _ in .json([User]()) }
        let calls = Calls()
        let handle = await withCheckedContinuation { (done: CheckedContinuation<CancellationHandle, Never>) in
            let box = Box<CancellationHandle?>(nil)
            let handle = executor.send(resource) { result in
                calls.append(result)
                var handle: CancellationHandle?
                while handle == nil {
                    handle = box.withLock { $0 }
                    if handle == nil { usleep(100) }
                }
                if let handle { done.resume(returning: handle) }
            }
            box.withLock { $0 = handle }
        }
        handle.cancel()
        try await Task.sleep(for: .milliseconds(20))
        #expect(calls.all.count == 1)
        #expect(try calls.all.first?.get() == [])
    }

    @Test func callbackExecutorAdaptsACompletionTransport() async throws {
        let executor = CallbackExecutor { request, complete in
            DispatchQueue.global().async {
                let body = Data(#"[{"id":7,"name":"cb"}]"#.utf8)
                complete(.success(Response(status: 200, headers: [.contentType: "application/json"], body: body)))
            }
            return {}
        }
        #expect(try await executor.send(resource) == [User(id: 7, name: "cb")])
    }

    @Test func callbackExecutorCancelsTheTransport() async throws {
        let cancelled = Box(false)
        let started = Box(false)
        let executor = CallbackExecutor { _, _ in
            started.withLock { $0 = true }
            // Never completes on its own.
            return { cancelled.withLock { $0 = true } }
        }
        let task = Task { try await executor.send(resource) }
        // Cancel only once the transport has started, so the cancel action is what ends it.
        await waitUntil { started.withLock({ $0 }) }
        task.cancel()
        let result = await task.result
        guard case .failure(let error as CourierError) = result, case .cancelled = error.cause else {
            Issue.record("unexpected \(result)")
            return
        }
        #expect(cancelled.withLock { $0 })
    }

    @Test func callbackExecutorIgnoresASecondCompletion() async throws {
        let executor = CallbackExecutor { _, complete in
            complete(.success(Response(status: 204)))
            complete(.failure(URLError(.timedOut)))
            return {}
        }
        let response = try await executor.send(Request.get |> baseURL(api))
        #expect(response.status == 204)
    }

    @Test func callbackExecutorRejectsInvalidRequests() async {
        let executor = CallbackExecutor { _, complete in
            Issue.record("transport must not run")
            complete(.success(Response(status: 200)))
            return {}
        }
        let error = await expectCourierError { _ = try await executor.send(Request.get |> baseURL(api) |> method("BAD METHOD")) }
        guard case .invalidRequest = error?.cause else {
            Issue.record("unexpected \(String(describing: error))")
            return
        }
    }

    @Test func completionRunsOnTheGivenQueue() async throws {
        let key = DispatchSpecificKey<String>()
        let queue = DispatchQueue(label: "courier.tests.completion")
        queue.setSpecific(key: key, value: "mine")
        let executor = InMemoryExecutor { _ in .text("hi") }
        let onQueue: Bool = await withCheckedContinuation { continuation in
            executor.send(Request.get |> baseURL(api) |> decodeText(), queue: queue) { _ in
                continuation.resume(returning: DispatchQueue.getSpecific(key: key) == "mine")
            }
        }
        #expect(onQueue)
        let cancelledOnQueue: Bool = await withCheckedContinuation { continuation in
            let slow = InMemoryExecutor { _ in .text("late").delayed(by: .seconds(30)) }
            slow.send(Request.get |> baseURL(api) |> decodeText(), queue: queue) { result in
                guard case .failure = result else { return continuation.resume(returning: false) }
                continuation.resume(returning: DispatchQueue.getSpecific(key: key) == "mine")
            }
            .cancel()
        }
        #expect(cancelledOnQueue)
    }
}
