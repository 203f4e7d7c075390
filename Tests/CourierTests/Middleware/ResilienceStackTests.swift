import Courier
import Foundation
import Testing

/// The resilience stack as one piece on a `ManualClock`: its order, a per-attempt timeout the
/// breaker counts, and every decision reaching a logging middleware outside it.
@Suite("ResilienceStack: the pieces in the order that works")
struct ResilienceStackTests {
    private static let get = Request.get |> url("https://a.test/items")

    @Test func theServerStackHasEveryPieceInTheDocumentedOrder() {
        let stack = ResilienceStack.server(hedgeAfter: .fixed(.milliseconds(50)))
        let names = stack.middleware.map { String(describing: type(of: $0)) }
        #expect(
            names == ["RetryMiddleware", "ServerPacing", "HedgingMiddleware", "CircuitBreaker", "AttemptTimeoutMiddleware"])
        #expect(ResilienceStack.server().hedging == nil, "hedging only when asked for")
        #expect(stack.retry?.budget != nil && stack.retry?.budget === stack.hedging?.budget, "one budget for retries and hedges")
        #expect(ResilienceStack().middleware.isEmpty)
    }

    @Test func anAttemptTimeoutInsideTheBreakerCountsAsAFailureAndIsRetried() async throws {
        let clock = ManualClock()
        let attempts = Box(0)
        // Every attempt hangs until cancelled.
        let origin = InMemoryExecutor(clock: clock) { _ in
            attempts.withLock { $0 += 1 }
            try await clock.sleep(for: .seconds(3600))
            return .status(200)
        }
        let breaker = CircuitBreaker(policy: .init(failureRatio: 1, minimumCalls: 2, breakDuration: .seconds(60)), clock: clock)
        let stack = ResilienceStack(
            retry: RetryMiddleware(policy: RetryPolicy(maxAttempts: 2, baseDelay: .zero), clock: clock),
            breaker: breaker, attemptTimeout: AttemptTimeoutMiddleware(.seconds(1), clock: clock))
        let logged = Box([String]())
        let executor = origin.with(resilience: stack).with(
            LoggingMiddleware { event in if event.kind == .resilience { logged.withLock { $0.append(event.description) } } })
        let call = Task { try await executor.send(Self.get) }
        try await clock.waitForSleepers(2)  // the attempt and its timeout
        clock.advance(by: .seconds(1))
        try await clock.waitForSleepers(2)  // the retry (no backoff) and its timeout
        clock.advance(by: .seconds(1))
        let error = await #expect(throws: CourierError.self) { _ = try await call.value }
        #expect(error?.errorType == "timedOut")
        #expect(attempts.withLock { $0 } == 2)
        #expect(breaker.state(for: Self.get) == .open, "both timeouts counted")
        #expect(logged.withLock { $0 } == ["⚑ GET https://a.test/items: circuit_opened https://a.test:443"])
        // Open: the next call fails at once, logged, nothing sent.
        _ = await #expect(throws: CourierError.self) { _ = try await executor.send(Self.get) }
        #expect(attempts.withLock { $0 } == 2)
        #expect(logged.withLock { $0.last ?? "" }.contains("circuit_rejected https://a.test:443"))
    }

    @Test func aSpentBudgetIsLoggedWithTheCall() async throws {
        let budget = RetryBudget(ratio: 0, minimumPerSecond: 0, clock: ManualClock())
        let events = Box([LoggingMiddleware.Event]())
        let executor = InMemoryExecutor.scripted([], then: .status(503))
            .with(resilience: ResilienceStack(retry: RetryMiddleware(policy: RetryPolicy(baseDelay: .zero), budget: budget)))
            .with(LoggingMiddleware { event in events.withLock { $0.append(event) } })
        #expect(try await executor.send(Self.get).status == 503)
        let resilience = events.withLock { $0.filter { $0.kind == .resilience } }
        #expect(resilience.map(\.resilience?.kind) == [.retryBudgetExhausted])
        #expect(resilience.first?.request.url?.host == "a.test")
    }

    @Test func eventsNameTheOriginAndNeverAPathQueryOrSecret() async throws {
        let secret = Request.get |> url("https://user:pw@a.test/private/path?token=s3cr3t")
        let events = Box([ResilienceEvent]())
        let breaker = CircuitBreaker(policy: .init(failureRatio: 1, minimumCalls: 1))
        let executor = InMemoryExecutor.scripted([], then: .status(500)).with(breaker, FaultInjection([.init(.latency(.zero))]))
        for _ in 0..<2 {
            _ = try? await ResilienceEvent.observing({ e in events.withLock { $0.append(e) } }) { try await executor.send(secret) }
        }
        let text = events.withLock { $0.map(\.description).joined(separator: "\n") }
        #expect(text.contains("circuit_opened https://a.test:443") && text.contains("circuit_rejected"))
        for leak in ["pw", "user", "private", "token", "s3cr3t"] { #expect(!text.contains(leak), "\(leak) in \(text)") }
        #expect(!ResilienceEvent.isObserved)
    }
}
