import Courier
import Foundation
import Testing

/// An attempt that ran out of time is a timeout to every piece inside it, wherever the limit is
/// configured: the composition a new user writes from the Resilience article
/// (`RetryPolicy.attemptTimeout` outside a `CircuitBreaker`) protects as the stack does.
@Suite("Attempt timeouts: a timeout to every piece that watches the attempt")
struct AttemptTimeoutCompositionTests {
    private static let slow = Request.get |> url("https://slow.test/deliveries")

    /// What a piece inside the attempt read the failure as.
    private struct Watcher: Middleware {
        let seen: Box<[CourierError.Cause]>
        func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
            do {
                return try await next(request)
            } catch {
                seen.withLock { $0.append(CourierError.wrapping(error, request: request).cause) }
                throw error
            }
        }
    }

    private static func isTimedOut(_ cause: CourierError.Cause) -> Bool {
        if case .timedOut = cause { true } else { false }
    }

    /// The user's path: a 300 ms origin, `attemptTimeout` 50 ms on the retry, a breaker inside
    /// it that opens after three failures. Six calls send three requests; the last three are
    /// refused without a byte.
    @Test(.timeLimit(.minutes(1))) func aRetrysAttemptTimeoutOpensTheBreakerInsideIt() async throws {
        let clock = ManualClock()
        let origin = InMemoryExecutor(routes: [.init(.get, "/deliveries", .status(200).delayed(by: .milliseconds(300)))], clock: clock)
        var policy = RetryPolicy(maxAttempts: 1)
        policy.attemptTimeout = .milliseconds(50)
        let api = origin.with(
            RetryMiddleware(policy: policy, clock: clock, random: .seeded(1)),
            CircuitBreaker(policy: .init(failureRatio: 0.5, minimumCalls: 3, breakDuration: .seconds(30)), clock: clock))
        var outcomes: [CourierError.Cause] = []
        for call in 1...6 {
            let task = Task { try await api.send(Self.slow) }
            if call <= 3 {
                try await clock.waitForSleepers(2)  // the attempt's limit and the slow origin
                clock.advance(by: .milliseconds(50))
            }
            let error = await #expect(throws: CourierError.self) { try await task.value }
            outcomes.append(try #require(error).cause)
        }
        #expect(origin.requests.count == 3)
        #expect(outcomes.prefix(3).allSatisfy(Self.isTimedOut))
        #expect(outcomes.suffix(3).allSatisfy { if case .circuitOpen = $0 { true } else { false } })
    }

    /// The same with the limit as its own middleware outside the breaker, and with retries: each
    /// attempt the breaker lets through counts.
    @Test(.timeLimit(.minutes(1))) func anAttemptTimeoutMiddlewareOutsideTheBreakerCountsToo() async throws {
        let clock = ManualClock()
        let origin = InMemoryExecutor(routes: [.init(.get, "/deliveries", .status(200).delayed(by: .seconds(5)))], clock: clock)
        let api = origin.with(
            AttemptTimeoutMiddleware(.milliseconds(100), clock: clock),
            CircuitBreaker(policy: .init(failureRatio: 0.5, minimumCalls: 2, breakDuration: .seconds(30)), clock: clock))
        for _ in 1...2 {
            let task = Task { try await api.send(Self.slow) }
            try await clock.waitForSleepers(2)
            clock.advance(by: .milliseconds(100))
            await #expect(throws: CourierError.self) { try await task.value }
        }
        let refused = await #expect(throws: CourierError.self) { try await api.send(Self.slow) }
        guard case .circuitOpen? = refused?.cause else {
            Issue.record("expected the breaker to refuse, got \(String(describing: refused))")
            return
        }
        #expect(origin.requests.count == 2)
    }

    /// Every piece inside reads the attempt's end as the timeout, with its limit; a call the
    /// caller cancels is still a cancellation to them.
    @Test(.timeLimit(.minutes(1))) func piecesInsideReadTheTimeoutNotACancellation() async throws {
        let clock = ManualClock()
        let seen = Box([CourierError.Cause]())
        let origin = InMemoryExecutor(routes: [.init(.get, "/deliveries", .status(200).delayed(by: .seconds(5)))], clock: clock)
        var policy = RetryPolicy(maxAttempts: 1)
        policy.attemptTimeout = .milliseconds(250)
        let api = origin.with(RetryMiddleware(policy: policy, clock: clock), Watcher(seen: seen))
        let task = Task { try await api.send(Self.slow) }
        try await clock.waitForSleepers(2)
        clock.advance(by: .milliseconds(250))
        let error = try #require(await #expect(throws: CourierError.self) { try await task.value })
        #expect(error.timeout == CourierError.Timeout(.attempt, limit: .milliseconds(250)))
        #expect(error.summary.contains("no response head within 250 ms"))
        #expect(seen.withLock { $0.count } == 1)
        #expect(seen.withLock { $0.allSatisfy(Self.isTimedOut) })

        // Cancelled by its caller: a cancellation, inside and out.
        let cancelled = Task { try await api.send(Self.slow) }
        try await clock.waitForSleepers(2)
        cancelled.cancel()
        let stopped = try #require(await #expect(throws: CourierError.self) { try await cancelled.value })
        guard case .cancelled = stopped.cause else {
            Issue.record("expected a cancellation, got \(stopped)")
            return
        }
        #expect(seen.withLock { $0.count } == 2)
        guard case .cancelled? = seen.withLock({ $0.last }) else {
            Issue.record("the piece inside read \(String(describing: seen.withLock { $0.last }))")
            return
        }
    }

    /// An outer attempt's limit that runs out stops the attempts inside it, and they read it as
    /// the outer limit.
    @Test(.timeLimit(.minutes(1))) func anOuterLimitThatRunsOutIsTheTimeoutInside() async throws {
        let clock = ManualClock()
        let seen = Box([CourierError.Cause]())
        let origin = InMemoryExecutor(routes: [.init(.get, "/deliveries", .status(200).delayed(by: .seconds(5)))], clock: clock)
        let api = origin.with(
            AttemptTimeoutMiddleware(.seconds(1), clock: clock), AttemptTimeoutMiddleware(.seconds(3), clock: clock), Watcher(seen: seen))
        let task = Task { try await api.send(Self.slow) }
        try await clock.waitForSleepers(3)
        clock.advance(by: .seconds(1))
        let error = try #require(await #expect(throws: CourierError.self) { try await task.value })
        #expect(error.timeout == CourierError.Timeout(.attempt, limit: .seconds(1)))
        #expect(seen.withLock { $0.count } == 1)
        #expect(seen.withLock { $0.allSatisfy(Self.isTimedOut) })
    }
}
