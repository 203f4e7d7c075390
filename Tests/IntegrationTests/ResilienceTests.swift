import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Integration: resilience", .timeLimit(.minutes(2)))
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
        // The backoff waits on a clock the test never advances, so the call can end only through
        // the cancel; the test waits for the backoff itself (a sleeper on the clock), not for a
        // guess at how long the first attempt takes, and reads no stopwatch.
        let clock = ManualClock()
        let retrying = executor.with(
            RetryMiddleware(policy: RetryPolicy(maxAttempts: 5, baseDelay: .seconds(5), maxDelay: .seconds(5)), clock: clock, random: .seeded(6)),
            counter)
        let resource = try HTTPBin.request() |> path("status", 503) |> decodeData()
        let task = Task { try await retrying.send(resource) }
        try await clock.waitForSleepers(1)
        #expect(counter.count.current == 1)
        task.cancel()
        let result = await task.result
        switch result {
        case .failure(let error as CourierError):
            guard case .cancelled = error.cause else {
                Issue.record("expected cancelled, got \(error)")
                break
            }
        default:
            Issue.record("unexpected \(result)")
        }
        // Nothing after the cancel: no second attempt, no sleeper left behind.
        #expect(counter.count.current == 1)
        #expect(clock.sleepers == 0)
    }
}
