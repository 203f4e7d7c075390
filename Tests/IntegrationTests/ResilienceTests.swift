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

    @Test func eachAttemptGetsItsOwnTimeAgainstASlowServer() async throws {
        let counter = Counter()
        var policy = RetryPolicy(maxAttempts: 2, baseDelay: .milliseconds(1), maxDelay: .milliseconds(1), deadline: nil)
        policy.attemptTimeout = .milliseconds(300)
        // httpbin takes 2 s to answer: each attempt runs out of its own 300 ms, whatever the
        // machine's speed, and the call ends after the second.
        let error = await #expect(throws: CourierError.self) {
            _ = try await executor.with(RetryMiddleware(policy: policy), counter).send(try HTTPBin.request() |> path("delay", 2))
        }
        #expect(error?.errorType == "timedOut")
        #expect(counter.count.current == 2)
    }

    @Test func anIdempotencyKeyIsTheSameOnEveryRetryOfAPostAndReachesTheServer() async throws {
        let sent = Counter()
        let keys = KeyBox()
        // The first attempt is refused with a 503 before it leaves (injected); the retry reaches
        // httpbin, which echoes the headers it received.
        let firstOnly = FaultInjection([.init(.status(503), when: { _ in sent.count.current == 1 })])
        let recordKey = Recorder(keys: keys)
        let retrying = executor.with(
            IdempotencyKeyMiddleware(), RetryMiddleware(policy: RetryPolicy(baseDelay: .milliseconds(1))), sent, recordKey, firstOnly)
        struct Echo: Decodable { var headers: [String: String] }
        let echo = try await retrying.send(try HTTPBin.request(.post) |> path("anything") |> body(Data("{}".utf8)) |> decode(Echo.self))
        let seen = keys.all
        #expect(seen.count == 2 && Set(seen).count == 1, "\(seen)")
        #expect(echo.headers["Idempotency-Key"] == seen.first)
        #expect(UUID(uuidString: seen.first ?? "") != nil)
    }

    /// Records each attempt's `Idempotency-Key`.
    struct Recorder: Middleware {
        let keys: KeyBox
        func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
            keys.append(request.headers[.idempotencyKey] ?? "")
            return try await next(request)
        }
    }

    final class KeyBox: @unchecked Sendable {
        // Sound: `values` is only touched while `lock` is held.
        private let lock = NSLock()
        private var values: [String] = []
        func append(_ value: String) {
            lock.lock()
            values.append(value)
            lock.unlock()
        }
        var all: [String] {
            lock.lock()
            defer { lock.unlock() }
            return values
        }
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
