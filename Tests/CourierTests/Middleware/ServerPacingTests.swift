import Courier
import Foundation
import Testing

/// Server pacing on a `ManualClock`: the rate-limit fields it reads (IETF drafts, `X-RateLimit-*`,
/// a Unix reset time), `Retry-After` across calls, a quota spent by concurrent callers, the
/// longest wait, and what a hostile server's values cannot do.
@Suite("ServerPacing: slow down before the server refuses")
struct ServerPacingTests {
    private static let a = Request.get |> url("https://a.test/items")
    private static let b = Request.get |> url("https://b.test/items")

    private static func rateLimited(_ error: CourierError?) -> RateLimited? {
        guard case .rateLimited(let reason)? = error?.cause else { return nil }
        return reason
    }

    @Test func anExhaustedQuotaMakesTheNextCallWaitForTheReset() async throws {
        let clock = ManualClock()
        let origin = InMemoryExecutor.scripted(
            [.status(200, headers: ["X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "2"])], then: .status(200))
        let pacing = ServerPacing(clock: clock)
        let executor = origin.with(pacing)
        _ = try await executor.send(Self.a)
        #expect(pacing.currentWait(for: Self.a) == .seconds(2))
        #expect(pacing.currentWait(for: Self.b) == .zero, "per origin")
        let events = Box([ResilienceEvent]())
        let call = Task { try await ResilienceEvent.observing({ e in events.withLock { $0.append(e) } }) { try await executor.send(Self.a) } }
        try await clock.waitForSleepers(1)
        #expect(origin.requests.count == 1, "the call waits, unsent")
        clock.advance(by: .seconds(2))
        #expect(try await call.value.status == 200)
        #expect(origin.requests.count == 2)
        #expect(events.withLock { $0.map(\.description) } == ["paced https://a.test:443 (2.0 s)"])
        // Another origin never waited.
        _ = try await executor.send(Self.b)
    }

    @Test func theRemainingQuotaIsSpentByCallsSentMeanwhile() async throws {
        let clock = ManualClock()
        let origin = InMemoryExecutor.scripted(
            [.status(200, headers: ["RateLimit": #""default";r=2;t=10"#, "RateLimit-Policy": #""default";q=100;w=60"#])],
            then: .status(200))
        let pacing = ServerPacing(maximumWait: .seconds(30), clock: clock)
        let executor = origin.with(pacing)
        _ = try await executor.send(Self.a)
        // Two left: two calls go (their responses say nothing more), the third waits.
        _ = try await executor.send(Self.a)
        _ = try await executor.send(Self.a)
        #expect(pacing.currentWait(for: Self.a) == .seconds(10))
        let third = Task { try await executor.send(Self.a) }
        try await clock.waitForSleepers(1)
        #expect(origin.requests.count == 3)
        clock.advance(by: .seconds(10))
        _ = try await third.value
        #expect(origin.requests.count == 4)
        #expect(pacing.currentWait(for: Self.a) == .zero, "a new window: the quota is unknown until the server says")
    }

    @Test func answersThatOvertakeOneAnotherDoNotGiveBackCallsAlreadySpent() async throws {
        let clock = ManualClock()
        let answered = Box(0)
        // The first answer says three calls are left; the three calls sent next are held, then
        // each answers with a count that did not see the others ("2 left").
        let origin = InMemoryExecutor(clock: clock) { _ in
            let number = answered.withLock { count -> Int in
                count += 1
                return count
            }
            if number == 1 { return .status(200, headers: ["RateLimit": #""q";r=3;t=60"#]) }
            try await clock.sleep(for: .seconds(1))
            return .status(200, headers: ["RateLimit": #""q";r=2;t=59"#])
        }
        let pacing = ServerPacing(maximumWait: .seconds(120), clock: clock)
        let executor = origin.with(pacing)
        _ = try await executor.send(Self.a)
        let calls = (0..<3).map { _ in Task { try await executor.send(Self.a) } }
        try await clock.waitForSleepers(3)
        #expect(pacing.currentWait(for: Self.a) == .seconds(60), "the three calls spent the quota")
        clock.advance(by: .seconds(1))
        for call in calls { _ = try await call.value }
        // Each answer's "2 left" counted only itself: the quota stays spent until the reset.
        #expect(pacing.currentWait(for: Self.a) == .seconds(59))
    }

    @Test func aWaitLongerThanAllowedFailsAtOnceSayingWhen() async throws {
        let clock = ManualClock()
        let origin = InMemoryExecutor.scripted(
            [.status(200, headers: ["RateLimit": #""burst";r=5;t=1, "day";r=0;t=3600"#])], then: .status(200))
        let executor = origin.with(ServerPacing(maximumWait: .seconds(10), clock: clock))
        _ = try await executor.send(Self.a)
        let error = await #expect(throws: CourierError.self) { _ = try await executor.send(Self.a) }
        let reason = try #require(Self.rateLimited(error))
        #expect(reason.origin == "https://a.test:443")
        #expect(reason.retryAfter == .seconds(3600), "the most restrictive policy wins")
        #expect(error?.errorType == "rateLimited" && error?.isTransient == false)
        #expect("\(String(describing: error))".contains("rate limited for another 3600.0 s"))
        #expect(origin.requests.count == 1, "nothing sent")
    }

    @Test func retryAfterOnA429HoldsEveryCallToTheOrigin() async throws {
        let clock = ManualClock()
        let origin = InMemoryExecutor.scripted([.status(429, headers: ["Retry-After": "3"])], then: .status(200))
        let executor = origin.with(ServerPacing(clock: clock))
        #expect(try await executor.send(Self.a).status == 429)
        let calls = (0..<3).map { _ in Task { try await executor.send(Self.a) } }
        try await clock.waitForSleepers(3)
        #expect(origin.requests.count == 1)
        _ = try await executor.send(Self.b)
        clock.advance(by: .seconds(3))
        for call in calls { #expect(try await call.value.status == 200) }
        // A Retry-After on a success is not a rate limit.
        let polite = InMemoryExecutor.scripted([.status(200, headers: ["Retry-After": "60"])], then: .status(200))
        let paced = ServerPacing(clock: clock)
        _ = try await polite.with(paced).send(Self.a)
        #expect(paced.currentWait(for: Self.a) == .zero)
    }

    @Test func theFieldsOfEachConventionAreRead() async throws {
        let clock = ManualClock()
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let cases: [(HTTPHeaders, Duration)] = [
            (["RateLimit": "limit=100, remaining=0, reset=7"], .seconds(7)),
            (["RateLimit-Limit": "100", "RateLimit-Remaining": "0", "RateLimit-Reset": "8"], .seconds(8)),
            (["X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1800000009"], .seconds(9)),  // GitHub: a Unix time
            (["X-RateLimit-Remaining": "3", "X-RateLimit-Reset": "9"], .zero),
        ]
        for (headers, wait) in cases {
            let pacing = ServerPacing(maximumWait: .seconds(60), clock: clock, now: { now })
            _ = try await InMemoryExecutor.scripted([.status(200, headers: headers)], then: .status(200)).with(pacing).send(Self.a)
            #expect(pacing.currentWait(for: Self.a) == wait, "\(headers)")
        }
    }

    @Test func hostileValuesAreIgnoredOrHeldToTheLongestWait() async throws {
        let clock = ManualClock()
        let hostile: [HTTPHeaders] = [
            ["X-RateLimit-Remaining": "-1", "X-RateLimit-Reset": "5"],
            ["X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "-5"],
            ["X-RateLimit-Remaining": "NaN", "X-RateLimit-Reset": "inf"],
            ["RateLimit": #""x";r=;t=, "y";r=1e9;t=5, ;;;=, "z";r=99999999999999999999999;t=1"#],
            ["X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "0x10"],
            ["RateLimit": String(repeating: "\"p\";r=1;t=1, ", count: 10_000)],
        ]
        for headers in hostile {
            let pacing = ServerPacing(clock: clock)
            _ = try await InMemoryExecutor.scripted([.status(200, headers: headers)], then: .status(200)).with(pacing).send(Self.a)
            #expect(pacing.currentWait(for: Self.a) == .zero, "\(headers)")
        }
        // A reset a century away: the call fails at once instead of waiting it.
        let pacing = ServerPacing(maximumWait: .seconds(5), clock: clock)
        let far = InMemoryExecutor.scripted(
            [.status(429, headers: ["Retry-After": "99999999999999", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "3153600000"])],
            then: .status(200))
        _ = try await far.with(pacing).send(Self.a)
        let error = await #expect(throws: CourierError.self) { _ = try await far.with(pacing).send(Self.a) }
        #expect(Self.rateLimited(error)?.retryAfter == .seconds(Request.maximumInterval))
    }
}
