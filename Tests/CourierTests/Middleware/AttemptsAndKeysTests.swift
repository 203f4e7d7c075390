import Courier
import Foundation
import Testing

/// Two pieces of retrying at scale: a time limit per attempt (each retry gets its own time), and
/// an idempotency key per logical call (the same on every retry, which makes a `POST` retryable).
@Suite("Retries: a time limit per attempt, a key per call")
struct AttemptsAndKeysTests {
    private static let request = Request.get |> url("https://api.test/slow")

    /// Answers late (10 s on `clock`) the first `late` times, then at once.
    private static func origin(clock: ManualClock, late: Int) -> InMemoryExecutor {
        let count = Box(0)
        return InMemoryExecutor(clock: clock) { _ in
            let number = count.withLock { count in
                count += 1
                return count
            }
            return number <= late ? Stub.text("late").delayed(by: .seconds(10)) : .text("ok")
        }
    }

    private static func policy(attempts: Int, timeout: Duration) -> RetryPolicy {
        var policy = RetryPolicy(maxAttempts: attempts, baseDelay: .zero, deadline: nil)
        policy.attemptTimeout = timeout
        return policy
    }

    @Test func anAttemptThatRunsOutOfTimeIsStoppedAndTheNextOneHasItsOwnTime() async throws {
        let clock = ManualClock()
        let origin = Self.origin(clock: clock, late: 1)
        let executor = origin.with(RetryMiddleware(policy: Self.policy(attempts: 3, timeout: .seconds(1)), clock: clock))
        let call = Task { try await executor.send(Self.request) }
        // The late answer's delay and the attempt's limit.
        try await clock.waitForSleepers(2)
        clock.advance(by: .seconds(1))
        let response = try await call.value
        #expect(String(decoding: response.body, as: UTF8.self) == "ok")
        #expect(origin.requests.count == 2)
        #expect(clock.now.offset == .seconds(1), "the second attempt did not wait for the first one's answer")
    }

    @Test func whenEveryAttemptRunsOutTheCallTimesOutAfterEachHadItsTime() async throws {
        let clock = ManualClock()
        let origin = Self.origin(clock: clock, late: 10)
        let executor = origin.with(RetryMiddleware(policy: Self.policy(attempts: 3, timeout: .seconds(1)), clock: clock))
        let call = Task { try await executor.send(Self.request) }
        for _ in 0..<3 {
            try await clock.waitForSleepers(2)
            clock.advance(by: .seconds(1))
        }
        let outcome = await call.result
        guard case .failure(let error as CourierError) = outcome, case .timedOut = error.cause else {
            Issue.record("expected a timeout, got \(outcome)")
            return
        }
        #expect(origin.requests.count == 3)
        #expect(clock.now.offset == .seconds(3))
    }

    @Test func theLimitIsClampedAndOffByDefault() {
        var policy = RetryPolicy()
        #expect(policy.attemptTimeout == nil)
        policy.attemptTimeout = .seconds(-4)
        #expect(policy.attemptTimeout == .zero)
        policy.attemptTimeout = .seconds(Int64.max)
        #expect(policy.attemptTimeout == .seconds(Request.maximumInterval))
        #expect(policy != RetryPolicy(), "the limit is part of the policy's value")
    }

    @Test func aPOSTGetsOneKeyPerCallKeptOnEveryRetryAndBecomesRetryable() async throws {
        let origin = InMemoryExecutor.scripted([.status(503), .status(503)], then: .status(201))
        let executor = origin.with(
            IdempotencyKeyMiddleware(random: .seeded(7)), RetryMiddleware(policy: RetryPolicy(baseDelay: .zero), clock: ManualClock()))
        let response = try await executor.send(.post |> url("https://api.test/payments") |> json(["amount": 5]))
        #expect(response.status == 201)
        let keys = origin.requests.map { $0.headers[.idempotencyKey] }
        #expect(keys.count == 3)
        let key = try #require(keys.first ?? nil)
        #expect(keys.allSatisfy { $0 == key }, "one key for the call, on every attempt")
        let parsed = try #require(UUID(uuidString: key), "\(key)")
        #expect(parsed.uuidString == key)
        #expect(Array(key)[14] == "4", "a version 4 UUID: \(key)")
        // The next call gets another key.
        _ = try await executor.send(.post |> url("https://api.test/payments"))
        #expect(origin.requests.last?.headers[.idempotencyKey] != key)
    }

    @Test func idempotentMethodsOwnKeysAndForbiddenRetriesAreLeftAlone() async throws {
        let origin = InMemoryExecutor { _ in .status(200) }
        let executor = origin.with(IdempotencyKeyMiddleware())
        _ = try await executor.send(.get |> url("https://api.test/a"))
        _ = try await executor.send(.put |> url("https://api.test/a"))
        _ = try await executor.send(.post |> url("https://api.test/a") |> header(.idempotencyKey, "mine"))
        _ = try await executor.send(.post |> url("https://api.test/a") |> retryable(false))
        #expect(origin.requests.map { $0.headers[.idempotencyKey] } == [nil, nil, "mine", nil])
        // A key makes a POST retryable; an explicit choice still wins.
        #expect((Request.post |> header(.idempotencyKey, "k")).isRetryable)
        #expect(!(Request.post).isRetryable)
        #expect(!(Request.post |> header(.idempotencyKey, "k") |> retryable(false)).isRetryable)
    }
}
