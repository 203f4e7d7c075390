import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Retry middleware", .timeLimit(.minutes(1)))
struct RetryMiddlewareTests {
    private let get = Request.get |> baseURL(api) |> path("items") |> decodeText()

    private func retry(_ policy: RetryPolicy = RetryPolicy(), clock: ManualClock, now: Date = Date()) -> RetryMiddleware {
        RetryMiddleware(policy: policy, clock: clock, random: .seeded(7), now: { now })
    }

    /// Runs `send` while advancing the clock by `step` whenever someone sleeps, up to `limit` times.
    /// The driver is woken by each sleeper's arrival and stopped when `send` returns.
    private func drive<T: Sendable>(
        _ clock: ManualClock, step: Duration = .seconds(1), limit: Int = 100,
        _ send: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let task = Task { try await send() }
        let driver = Task {
            for _ in 0..<limit {
                guard (try? await clock.waitForSleepers(1)) != nil else { return }
                clock.advance(by: step)
            }
        }
        defer { driver.cancel() }
        return try await task.value
    }

    @Test func retriesServerErrorsThenSucceeds() async throws {
        let clock = ManualClock()
        let server = InMemoryExecutor.scripted([.status(503), .status(502)], then: .text("ok"))
        let executor = server.with(retry(clock: clock))
        let text = try await drive(clock) { try await executor.send(get) }
        #expect(text == "ok")
        #expect(server.requests.count == 3)
        #expect(clock.totalSleeps == 2)
    }

    @Test func middlewareInsideTheRetrySeesWhichAttemptItIs() async throws {
        let clock = ManualClock()
        let server = InMemoryExecutor.scripted([.status(503), .status(502)], then: .text("ok"))
        let events = Events()
        // Logging inside the retry: one exchange per attempt, numbered.
        let executor = server.with(retry(clock: clock), LoggingMiddleware { events.append($0) })
        _ = try await drive(clock) { try await executor.send(get) }
        let attempts = events.all.filter { $0.kind == .response }.map(\.attempt)
        #expect(attempts == [1, 2, 3])
        #expect(RetryPolicy.currentAttempt == 1)
    }

    /// Logged events, from any task. `@unchecked Sendable` is sound: the array is only touched
    /// while the lock is held.
    final class Events: @unchecked Sendable {
        private let lock = NSLock()
        private var events: [LoggingMiddleware.Event] = []
        func append(_ event: LoggingMiddleware.Event) {
            lock.lock()
            events.append(event)
            lock.unlock()
        }
        var all: [LoggingMiddleware.Event] {
            lock.lock()
            defer { lock.unlock() }
            return events
        }
    }

    @Test(arguments: [408, 429, 500, 502, 503, 504])
    func defaultRetryableStatuses(status: Int) async throws {
        let clock = ManualClock()
        let server = InMemoryExecutor.scripted([.status(status)], then: .text("ok"))
        _ = try await drive(clock) { try await server.with(retry(clock: clock)).send(get) }
        #expect(server.requests.count == 2)
    }

    @Test(arguments: [400, 401, 403, 404, 409, 422, 501])
    func otherStatusesAreNotRetried(status: Int) async throws {
        let clock = ManualClock()
        let server = InMemoryExecutor.scripted([.status(status)], then: .text("ok"))
        let response = try await server.with(retry(clock: clock)).send(Request.get |> baseURL(api))
        #expect(response.status == status)
        #expect(server.requests.count == 1)
    }

    @Test func givesUpAfterMaxAttemptsWithTheLastResponse() async throws {
        let clock = ManualClock()
        let server = InMemoryExecutor.scripted([], then: .status(503))
        let executor = server.with(retry(RetryPolicy(maxAttempts: 4), clock: clock))
        let error = try await #require(throws: CourierError.self) { try await drive(clock) { try await executor.send(get) } }
        guard case .unacceptableStatus(503, _) = error.cause else {
            Issue.record("unexpected \(error)")
            return
        }
        #expect(server.requests.count == 4)
    }

    @Test func nonIdempotentRequestsAreNotRetriedUnlessOptedIn() async throws {
        let clock = ManualClock()
        let server = InMemoryExecutor.scripted([.status(503)], then: .text("ok"))
        let executor = server.with(retry(clock: clock))
        let post = Request.post |> baseURL(api) |> json(["a": 1])
        #expect(try await executor.send(post).status == 503)
        #expect(server.requests.count == 1)

        server.reset()
        let optedIn = try await drive(clock) { try await executor.send(post |> retryable() |> decodeText()) }
        #expect(optedIn == "ok")
        // The same body bytes are replayed.
        #expect(server.requests.map(\.body) == [post.body])

        let optedOut = InMemoryExecutor.scripted([.status(503)], then: .text("ok"))
        #expect(try await optedOut.with(retry(clock: clock)).send(Request.get |> baseURL(api) |> retryable(false)).status == 503)
    }

    @Test func transientTransportFailuresAreRetried() async throws {
        let clock = ManualClock()
        let server = InMemoryExecutor.scripted(
            [.failure(URLError(.networkConnectionLost)), .failure(URLError(.timedOut))], then: .text("ok"))
        let text = try await drive(clock) { try await server.with(retry(clock: clock)).send(get) }
        #expect(text == "ok")
        #expect(server.requests.count == 3)
    }

    @Test func permanentTransportFailuresAreNot() async throws {
        let clock = ManualClock()
        let server = InMemoryExecutor.scripted([.failure(URLError(.badURL))], then: .text("ok"))
        _ = await expectCourierError { _ = try await server.with(retry(clock: clock)).send(get) }
        #expect(server.requests.count == 1)
    }

    @Test func backoffIsFullJitterUnderTheExponentialCeiling() {
        let policy = RetryPolicy(baseDelay: .milliseconds(100), maxDelay: .seconds(1))
        #expect(policy.backoffCeiling(beforeRetry: 1) == .milliseconds(100))
        #expect(policy.backoffCeiling(beforeRetry: 2) == .milliseconds(200))
        #expect(policy.backoffCeiling(beforeRetry: 4) == .milliseconds(800))
        #expect(policy.backoffCeiling(beforeRetry: 5) == .seconds(1))
        #expect(policy.backoffCeiling(beforeRetry: 60) == .seconds(1))
    }

    @Test func jitterIsDeterministicWithASeed() async throws {
        func firstWait() async throws -> Duration {
            let clock = ManualClock()
            let server = InMemoryExecutor.scripted([.status(503)], then: .text("ok"))
            let executor = server.with(RetryMiddleware(policy: RetryPolicy(), clock: clock, random: .seeded(99)))
            let task = Task { try await executor.send(get) }
            try await clock.waitForSleepers(1)
            // Step in 1 ms increments until the sleeper wakes.
            var waited = Duration.zero
            while clock.sleepers > 0 {
                clock.advance(by: .milliseconds(1))
                waited += .milliseconds(1)
            }
            _ = try await task.value
            return waited
        }
        let first = try await firstWait()
        let second = try await firstWait()
        #expect(first == second)
        #expect(first <= .milliseconds(501))
    }

    @Test func retryAfterSecondsIsHonouredExactly() async throws {
        let clock = ManualClock()
        let server = InMemoryExecutor.scripted([.status(429, headers: [.retryAfter: "2"])], then: .text("ok"))
        let executor = server.with(retry(clock: clock))
        let task = Task { try await executor.send(get) }
        try await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(1999))
        #expect(clock.sleepers == 1)
        clock.advance(by: .milliseconds(1))
        #expect(try await task.value == "ok")
    }

    /// RFC 9110 §5.6.7: a recipient accepts all three formats (IMF-fixdate, the obsolete RFC 850
    /// and asctime ones).
    @Test(arguments: ["Sun, 06 Nov 1994 08:49:40 GMT", "Sunday, 06-Nov-94 08:49:40 GMT", "Sun Nov  6 08:49:40 1994"])
    func retryAfterHTTPDateIsHonoured(date: String) async throws {
        let now = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT
        let clock = ManualClock()
        let server = InMemoryExecutor.scripted(
            [.status(503, headers: [.retryAfter: date])], then: .text("ok"))
        let executor = server.with(retry(clock: clock, now: now))
        let task = Task { try await executor.send(get) }
        try await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(2999))
        #expect(clock.sleepers == 1)
        clock.advance(by: .milliseconds(1))
        #expect(try await task.value == "ok")
    }

    /// Found by the RetryAfter fuzz target: `Su` and a combining mark (U+0651) made Foundation's
    /// DateFormatter on Linux stop the process ("Incorrect range"), so any server could crash a
    /// client that retries. Dates are now read by Courier's own parser; garbage is ignored.
    @Test(arguments: [
        "soon", "-5", "1.5", "", "99999999999999999999999", "Mon, 32 Foo 2024", "Su\u{651}  ", "Sun, 06 Nov 1994 08:49:37 GMT\u{301}",
        "Sun, 31 Feb 2026 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 08:49:37 PST", "Sun, 6 Nov 1994 08:49:37 GMT",
        "Sun,  06 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 99999 08:49:37 GMT", "Sun Nov 6 08:49:37 1994",
    ])
    func garbageRetryAfterFallsBackToBackoff(value: String) async throws {
        let clock = ManualClock()
        let server = InMemoryExecutor.scripted([.status(503, headers: [.retryAfter: value])], then: .text("ok"))
        let text = try await drive(clock, step: .seconds(1)) {
            try await server.with(self.retry(clock: clock)).send(self.get)
        }
        #expect(text == "ok")
        #expect(server.requests.count == 2)
    }

    @Test func retryAfterBeyondTheCapEndsRetries() async throws {
        let clock = ManualClock()
        let server = InMemoryExecutor.scripted([.status(503, headers: [.retryAfter: "3600"])], then: .text("ok"))
        let response = try await server.with(retry(clock: clock)).send(Request.get |> baseURL(api))
        #expect(response.status == 503)
        #expect(clock.totalSleeps == 0)
    }

    @Test func deadlineStopsRetries() async throws {
        let clock = ManualClock()
        let server = InMemoryExecutor.scripted([], then: .status(503, headers: [.retryAfter: "4"]))
        let policy = RetryPolicy(maxAttempts: 10, maxDelay: .seconds(10), deadline: .seconds(10))
        let response = try await drive(clock, step: .seconds(4)) {
            try await server.with(self.retry(policy, clock: clock)).send(Request.get |> baseURL(api))
        }
        // Attempts at 0 s, 4 s and 8 s; a fourth at 12 s would pass the 10 s deadline.
        #expect(response.status == 503)
        #expect(server.requests.count == 3)
    }

    @Test func cancellationDuringBackoffEndsAtOnceWithoutRetrying() async throws {
        let clock = ManualClock()
        let server = InMemoryExecutor.scripted([], then: .status(503))
        let executor = server.with(retry(clock: clock))
        let task = Task { try await executor.send(get) }
        try await clock.waitForSleepers(1)
        task.cancel()
        let result = await task.result
        guard case .failure(let error as CourierError) = result, case .cancelled = error.cause else {
            Issue.record("unexpected \(result)")
            return
        }
        #expect(server.requests.count == 1)
        #expect(clock.sleepers == 0)
    }

    @Test func cancellationIsNeverRetried() async throws {
        let clock = ManualClock()
        let server = InMemoryExecutor.scripted([.failure(CancellationError())], then: .text("ok"))
        _ = await expectCourierError { _ = try await server.with(retry(clock: clock)).send(get) }
        #expect(server.requests.count == 1)
    }
}
