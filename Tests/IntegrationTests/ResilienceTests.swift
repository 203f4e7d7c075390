import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Integration: resilience")
struct ResilienceTests {
    let executor = HTTPBin.executor()

    /// Counts requests that reach the transport.
    struct Counter: Middleware {
        let count = CountBox()
        func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
            count.increment()
            return try await next(request)
        }
    }

    final class CountBox: @unchecked Sendable {
        // Sound: `value` is only touched while `lock` is held.
        private let lock = NSLock()
        private var value = 0
        func increment() {
            lock.lock()
            value += 1
            lock.unlock()
        }
        var current: Int {
            lock.lock()
            defer { lock.unlock() }
            return value
        }
    }

    @Test func status503IsRetriedTheConfiguredNumberOfTimes() async throws {
        let counter = Counter()
        let retrying = executor.with(
            RetryMiddleware(policy: RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(20), maxDelay: .milliseconds(50))),
            counter)
        let response = try await retrying.send(try HTTPBin.request() |> path("status", 503))
        #expect(response.status == 503)
        #expect(counter.count.current == 3)
        let post = Counter()
        _ = try await executor.with(RetryMiddleware(policy: RetryPolicy(baseDelay: .milliseconds(10))), post)
            .send(try HTTPBin.request(.post) |> path("status", 503))
        #expect(post.count.current == 1)
    }

    @Test func cancellingDuringRetryBackoffEndsOnce() async throws {
        let counter = Counter()
        // Seed 6 makes the first jittered wait 0.74 × 5 s, so the cancel lands in the backoff.
        let retrying = executor.with(
            RetryMiddleware(policy: RetryPolicy(maxAttempts: 5, baseDelay: .seconds(5), maxDelay: .seconds(5)), random: .seeded(6)),
            counter)
        let resource = try HTTPBin.request() |> path("status", 503) |> decodeData()
        let task = Task { try await retrying.send(resource) }
        while counter.count.current == 0 { try await Task.sleep(for: .milliseconds(10)) }
        try await Task.sleep(for: .milliseconds(500))
        let clock = ContinuousClock()
        let cancelledAt = clock.now
        task.cancel()
        let result = await task.result
        // Sooner than the 3.7 s backoff it cut short (measured from the cancel, a bound set by
        // that wait, not by the machine's speed).
        #expect(clock.now - cancelledAt < .seconds(3))
        switch result {
        case .failure(let error as CourierError):
            // Cancelled in the backoff; or, on a very slow machine, cancelled just as the 503
            // arrived, which is then returned rather than retried.
            switch error.cause {
            case .cancelled, .unacceptableStatus(503, _): break
            default: Issue.record("unexpected \(error)")
            }
        default:
            Issue.record("unexpected \(result)")
        }
        try await Task.sleep(for: .milliseconds(300))
        #expect(counter.count.current == 1)
    }
}
