@testable import CourierCore
import Courier
import Foundation
import Testing

/// Every example of the Resilience article, built as the article writes it (the executor swapped
/// for the in-memory one, clocks made manual), and the protection it promises exercised: a
/// failing origin kept off, retries bounded, a slow attempt cut, a rate limit obeyed, faults
/// absorbed. An example whose protection this cannot show is a wrong example.
@Suite("The Resilience article's examples protect as it says")
struct ResilienceArticleTests {
    /// Runs `operation` to its end, moving `clock` to the next wake-up of a sleeper of `kinds`
    /// whenever one sleeps and the operation has not ended: the waits the example means to pass
    /// (a backoff, an attempt's limit), never a slow origin's.
    static func drive<T: Sendable>(
        _ clock: ManualClock, passing kinds: [ManualClock.SleepKind], _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let ended = Locked(false)
        let task = Task {
            defer { ended.withLock { $0 = true } }
            return try await operation()
        }
        while true {
            await waitUntil { ended.withLock { $0 } || kinds.contains { clock.sleepers(of: $0) > 0 } }
            if ended.withLock({ $0 }) { return try await task.value }
            if let next = kinds.compactMap({ clock.nextWakeUp(of: $0) }).min() {
                clock.advance(by: max(.zero, clock.now.duration(to: next)))
            }
        }
    }

    static func outcome(_ operation: () async throws -> Response) async -> Result<Response, any Error> {
        do { return .success(try await operation()) } catch { return .failure(error) }
    }

    static func cause(_ outcome: Result<Response, any Error>) -> CourierError.Cause? {
        guard case .failure(let error) = outcome else { return nil }
        return (error as? CourierError)?.cause
    }

    static func isCircuitOpen(_ outcome: Result<Response, any Error>) -> Bool {
        if case .circuitOpen? = cause(outcome) { true } else { false }
    }

    // MARK: An app's client

    /// "An app's client": retries a 503 until it answers, refreshes a rejected token once, keeps
    /// at most six calls in flight, stops a body over 10 MB, and logs no credential.
    @Test(.timeLimit(.minutes(1))) func anAppsClientRetriesRefreshesBoundsAndStopsAHugeBody() async throws {
        let clock = ManualClock()
        let inFlight = Locked((now: 0, most: 0))
        let refreshes = Locked(0)
        let lines = Locked<[String]>([])
        let origin = InMemoryExecutor(
            routes: [
                .init(.get, "/report", script: [.status(503), .status(503)], then: .status(200, body: Data("report".utf8))),
                .init(.get, "/me") { request, _ in request.headers[.authorization] == "Bearer fresh-token" ? .status(200) : .status(401) },
                .init(.get, "/big", .status(200, body: Data(count: 11 << 20))),
                .init(.get, "/slow/{n}") { _, _ in
                    inFlight.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
                    defer { inFlight.withLock { $0.now -= 1 } }
                    try await clock.sleep(for: .seconds(1))
                    return .status(200)
                },
            ],
            clock: clock, redirects: .follow, maximumResponseSize: 10 << 20)
        let executor = origin.with(
            RetryMiddleware(policy: RetryPolicy(maxAttempts: 3), clock: clock, random: .seeded(7)),
            AuthRefreshMiddleware(origins: ["https://api.example.com"]) { _ in
                refreshes.withLock { $0 += 1 }
                return "fresh-token"
            },
            ConcurrencyLimitMiddleware(limit: 6),
            DeduplicationMiddleware(),
            LoggingMiddleware(bodies: .on(maxBytes: 2048)) { event in lines.withLock { $0.append("\(event)") } }
        )
        let api: RequestBuilder = baseURL("https://api.example.com")

        // Two 503s, then an answer: three requests, the caller sees the answer.
        let report = try await Self.drive(clock, passing: [.retryBackoff]) { try await executor.send(.get |> api |> path("report") |> deadline(30)) }
        #expect(report.status == 200 && origin.requests.filter { $0.path == "/report" }.count == 3)

        // A rejected token is refreshed once and the call sent again with the new one.
        let me = try await executor.send(.get |> api |> path("me"))
        #expect(me.status == 200 && refreshes.withLock { $0 } == 1)
        #expect(lines.withLock { $0 }.allSatisfy { !$0.contains("fresh-token") })

        // A body over the limit stops with its size, never reaching the caller whole.
        let big = await #expect(throws: CourierError.self) { try await executor.send(.get |> api |> path("big")) }
        guard case .responseTooLarge(let limit)? = big?.cause else {
            Issue.record("a body over 10 MB gave \(String(describing: big))")
            return
        }
        #expect(limit == 10 << 20)

        // Ten calls at once: six reach the origin, the other four wait for them.
        let calls = (1...10).map { n in Task { try await executor.send(.get |> api |> path("slow", n)) } }
        try await clock.waitForSleepers(6, of: .unlabelled)
        clock.advance(by: .seconds(1))
        try await clock.waitForSleepers(4, of: .unlabelled)
        clock.advance(by: .seconds(1))
        for call in calls { #expect(try await call.value.status == 200) }
        #expect(inFlight.withLock { $0.most } == 6)
    }

    // MARK: The server stack

    /// "The server stack" against an origin that only fails: the breaker opens after twenty
    /// failed attempts and the rest of the calls send nothing; without it, 40 calls of three
    /// attempts would have sent 120 requests.
    @Test(.timeLimit(.minutes(1))) func theServerStackKeepsAFailingOriginOff() async throws {
        let clock = ManualClock()
        let origin = InMemoryExecutor.scripted([], then: .status(503))
        let stack = ResilienceStack.server(attempts: 3, attemptTimeout: .seconds(2), hedgeAfter: .percentile(0.95), clock: clock)
        let orders = origin
            .with(resilience: stack)
            .with(IdempotencyKeyMiddleware(), LoggingMiddleware { _ in })
        var outcomes: [Result<Response, any Error>] = []
        for _ in 1...40 {
            outcomes.append(await Self.outcome { try await Self.drive(clock, passing: [.retryBackoff, .pacing]) { try await orders.send(.get |> url("https://orders.test/o/1")) } })
        }
        #expect(outcomes.suffix(10).allSatisfy(Self.isCircuitOpen))
        #expect((20...30).contains(origin.requests.count), "\(origin.requests.count) requests reached a failing origin")
    }

    // MARK: Each piece alone

    /// The article's pieces, composed as "Each piece alone" composes them.
    static func pieces(_ origin: InMemoryExecutor, clock: ManualClock) -> InMemoryExecutor {
        let budget = RetryBudget(ratio: 0.1, minimumPerSecond: 2, clock: clock)
        let breaker = CircuitBreaker(policy: .init(failureRatio: 0.5, minimumCalls: 20, breakDuration: .seconds(15)), clock: clock)
        var policy = RetryPolicy(maxAttempts: 4, deadline: .seconds(10))
        policy.attemptTimeout = .seconds(1)
        return origin.with(
            RetryMiddleware(policy: policy, budget: budget, clock: clock, random: .seeded(3)),
            ServerPacing(maximumWait: .seconds(3), clock: clock),
            HedgingMiddleware(delay: .fixed(.milliseconds(80)), budget: budget, clock: clock),
            breaker)
    }

    /// A failing origin: the budget holds the retries to a share of the calls, then the breaker
    /// opens and the calls after it send nothing.
    @Test(.timeLimit(.minutes(1))) func eachPieceAloneKeepsAFailingOriginOff() async throws {
        let clock = ManualClock()
        let origin = InMemoryExecutor.scripted([], then: .status(503))
        let inventory = Self.pieces(origin, clock: clock)
        var outcomes: [Result<Response, any Error>] = []
        for _ in 1...40 {
            outcomes.append(await Self.outcome { try await Self.drive(clock, passing: [.retryBackoff, .pacing]) { try await inventory.send(.get |> url("https://inventory.test/stock")) } })
        }
        #expect(outcomes.suffix(10).allSatisfy(Self.isCircuitOpen))
        #expect((20...30).contains(origin.requests.count), "\(origin.requests.count) requests reached a failing origin")
    }

    /// A slow origin: each attempt ends after its one second, as a timeout that says so, and the
    /// call ends within its ten-second deadline instead of waiting a minute for the origin.
    @Test(.timeLimit(.minutes(1))) func eachPieceAloneCutsASlowAttempt() async throws {
        let clock = ManualClock()
        let origin = InMemoryExecutor(routes: [.init(.get, "/stock", .status(200).delayed(by: .seconds(60)))], clock: clock)
        let inventory = Self.pieces(origin, clock: clock)
        let start = clock.now
        let outcome = await Self.outcome {
            try await Self.drive(clock, passing: [.attemptTimeout, .retryBackoff, .hedgeDelay, .pacing]) {
                try await inventory.send(.get |> url("https://inventory.test/stock"))
            }
        }
        guard case .timedOut? = Self.cause(outcome), case .failure(let error as CourierError) = outcome else {
            Issue.record("a slow origin gave \(outcome)")
            return
        }
        #expect(error.timeout?.kind == .attempt && error.timeout?.limit == .seconds(1))
        #expect(start.duration(to: clock.now) <= .seconds(10))
        #expect((1...8).contains(origin.requests.count))
    }

    /// A rate limit longer than the pacing's three seconds: the next call fails at once as rate
    /// limited and sends nothing.
    @Test(.timeLimit(.minutes(1))) func eachPieceAloneObeysARateLimit() async throws {
        let clock = ManualClock()
        let origin = InMemoryExecutor.scripted([], then: .status(429, headers: ["Retry-After": "60"]))
        let inventory = Self.pieces(origin, clock: clock)
        let limited = try await Self.drive(clock, passing: [.retryBackoff]) { try await inventory.send(.get |> url("https://inventory.test/stock")) }
        #expect(limited.status == 429)
        let sent = origin.requests.count
        let refused = await #expect(throws: CourierError.self) { try await inventory.send(.get |> url("https://inventory.test/stock")) }
        guard case .rateLimited? = refused?.cause else {
            Issue.record("the call after a long rate limit gave \(String(describing: refused))")
            return
        }
        #expect(origin.requests.count == sent)
    }

    // MARK: What it did, observed

    /// "What it did, observed": the breaker's events reach the observer, naming the origin.
    @Test func theObservedBreakerReportsItsEvents() async throws {
        let breaker = CircuitBreaker()
        let api = InMemoryExecutor.scripted([], then: .status(503)).with(breaker)
        let events = Locked<[ResilienceEvent]>([])
        for _ in 1...CircuitBreaker.Policy().minimumCalls {
            _ = try await ResilienceEvent.observing({ event in events.withLock { $0.append(event) } }) {
                try await api.send(.get |> url("https://api.test/health"))
            }
        }
        let seen = events.withLock { $0 }
        #expect(seen.map(\.kind) == [.circuitOpened])
        #expect(seen.first?.origin == "https://api.test:443")
    }

    // MARK: Rehearse an outage

    /// "Rehearse an outage": the stack absorbs the faults injected beneath it. One in five
    /// attempts is a 503 and one in twenty three seconds late; every call still succeeds.
    @Test(.timeLimit(.minutes(1))) func aRehearsedOutageIsAbsorbedByTheStack() async throws {
        let clock = ManualClock()
        let chaos = FaultInjection(
            [.init(.status(503), probability: 0.2), .init(.latency(.seconds(3)), probability: 0.05)],
            random: .seeded(1), clock: clock)
        let origin = InMemoryExecutor.scripted([], then: .status(200))
        let rehearsal = origin
            .with(chaos)
            .with(resilience: ResilienceStack.server(clock: clock))
        let faults = Locked(0)
        var statuses: [Int] = []
        for _ in 1...50 {
            let response = try await ResilienceEvent.observing({ event in if event.kind == .faultInjected { faults.withLock { $0 += 1 } } }) {
                try await Self.drive(clock, passing: [.retryBackoff, .injectedLatency]) { try await rehearsal.send(.get |> url("https://api.test/items")) }
            }
            statuses.append(response.status)
        }
        #expect(faults.withLock { $0 } >= 5)
        #expect(statuses.allSatisfy { $0 == 200 }, "statuses: \(statuses)")
    }
}
