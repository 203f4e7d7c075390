import Courier
import CourierConformance
import CourierNIO
import Foundation
import NIOConcurrencyHelpers
import Testing

/// Many callers against one real origin that starts failing (the hostile server's `/fleet`, whose
/// mode a test switches and whose requests it counts): what a retry budget and a circuit breaker
/// do to the load the origin receives. Sixteen concurrent callers, twenty calls each.
@Suite("Fleet: a failing origin under many retrying callers", .serialized, .timeLimit(.minutes(2)))
struct FleetTests {
    static let callers = 16
    static let callsEach = 20

    /// A fresh origin (its own key) in `mode`, and its address.
    static func origin(_ mode: String) async throws -> (url: String, key: String) {
        let hostile = try servers().hostile
        let key = UUID().uuidString
        try await setMode(mode, hostile: hostile, key: key)
        return (hostile + "/fleet?key=" + key, key)
    }

    static func setMode(_ mode: String, hostile: String, key: String) async throws {
        let status = try await NIOExecutor.shared.send(.get |> url(hostile + "/fleet-mode") |> query("key", key) |> query("mode", mode)).status
        try #require(status == 204)
    }

    struct Count: Decodable {
        var requests: Int
        var disconnects: Int
        var refused: Int
    }

    static func count(key: String) async throws -> Count {
        let hostile = try servers().hostile
        return try await NIOExecutor.shared.send(.get |> url(hostile + "/fleet-count") |> query("key", key) |> decode(Count.self))
    }

    static func requests(key: String) async throws -> Int { try await count(key: key).requests }

    /// Waits (on the server's count, not a guess at time) until every request the origin held was
    /// given up on by its client.
    static func disconnects(key: String, reaching expected: Int) async throws -> Int {
        var seen = try await count(key: key).disconnects
        while seen < expected {
            try await Task.sleep(for: .milliseconds(20))
            seen = try await count(key: key).disconnects
        }
        return seen
    }

    /// The latency below which `share` of `samples` lie.
    static func percentile(_ share: Double, of samples: [Duration]) -> Duration {
        let sorted = samples.sorted()
        return sorted[min(sorted.count - 1, max(0, Int((share * Double(sorted.count)).rounded(.up)) - 1))]
    }

    static func milliseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
    }

    /// Every caller's calls, concurrently; the statuses or errors they ended with.
    static func run(_ executor: NIOExecutor, url address: String, callsEach: Int = callsEach) async -> [Result<Int, CourierError>] {
        await withTaskGroup(of: [Result<Int, CourierError>].self) { group in
            for _ in 0..<callers {
                group.addTask {
                    var outcomes: [Result<Int, CourierError>] = []
                    for _ in 0..<callsEach {
                        do {
                            outcomes.append(.success(try await executor.send(.get |> url(address)).status))
                        } catch let error as CourierError {
                            outcomes.append(.failure(error))
                        } catch {
                            outcomes.append(.failure(CourierError.wrapping(error, request: nil)))
                        }
                    }
                    return outcomes
                }
            }
            return await group.reduce(into: []) { $0 += $1 }
        }
    }

    static let retrying = RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(1), maxDelay: .milliseconds(5), deadline: nil)

    @Test func aRetryBudgetKeepsAFailingOriginToAtMostOnePointTwoRequestsPerCall() async throws {
        let calls = Self.callers * Self.callsEach
        let transport = try NIOTransport()
        defer { Task { await transport.shutdown() } }
        let unbudgeted = try await Self.origin("503")
        let plain = NIOExecutor(transport: transport).with(RetryMiddleware(policy: Self.retrying))
        let plainOutcomes = await Self.run(plain, url: unbudgeted.url)
        #expect(plainOutcomes.allSatisfy { (try? $0.get()) == 503 })
        let without = try await Self.requests(key: unbudgeted.key)
        #expect(without == calls * 3, "every call made its three attempts")

        let budgeted = try await Self.origin("503")
        let budget = RetryBudget(ratio: 0.2, minimumPerSecond: 0)
        let guarded = NIOExecutor(transport: transport).with(RetryMiddleware(policy: Self.retrying, budget: budget))
        let guardedOutcomes = await Self.run(guarded, url: budgeted.url)
        #expect(guardedOutcomes.allSatisfy { (try? $0.get()) == 503 })
        let with = try await Self.requests(key: budgeted.key)
        #expect(with >= calls)
        #expect(Double(with) / Double(calls) <= 1.2, "\(with) requests for \(calls) calls")
        print("fleet: a 503 origin received \(without) requests for \(calls) calls without a budget, \(with) with one (20%)")
    }

    /// An origin that resets every connection before answering: the exchange does not send a hop
    /// again when the connection it lost was opened for it, so each attempt costs one request.
    @Test func aRetryBudgetAlsoHoldsAnOriginThatResetsEveryConnection() async throws {
        let calls = Self.callers * Self.callsEach
        let transport = try NIOTransport()
        defer { Task { await transport.shutdown() } }
        let unbudgeted = try await Self.origin("reset")
        let plain = await Self.run(NIOExecutor(transport: transport).with(RetryMiddleware(policy: Self.retrying)), url: unbudgeted.url)
        #expect(plain.allSatisfy {
            if case .failure(let error) = $0, case .transport(let failure) = error.cause { return failure.kind == .connectionLost }
            return false
        })
        let without = try await Self.requests(key: unbudgeted.key)
        #expect(without == calls * 3, "three attempts a call, one request each")

        let budgeted = try await Self.origin("reset")
        let budget = RetryBudget(ratio: 0.2, minimumPerSecond: 0)
        _ = await Self.run(NIOExecutor(transport: transport).with(RetryMiddleware(policy: Self.retrying, budget: budget)), url: budgeted.url)
        let with = try await Self.requests(key: budgeted.key)
        #expect(Double(with) / Double(calls) <= 1.2, "\(with) requests for \(calls) calls")
        print("fleet: an origin resetting every connection received \(without) requests for \(calls) calls without a budget, \(with) with one")
    }

    @Test func aCircuitBreakerStopsTheLoadWhileTheOriginFailsAndLetsItBackWhenItRecovers() async throws {
        let calls = Self.callers * Self.callsEach
        let transport = try NIOTransport()
        defer { Task { await transport.shutdown() } }
        let origin = try await Self.origin("503")
        let breakDuration = Duration.milliseconds(200)
        let transitions = NIOLockedValueBox([CircuitBreaker.Transition]())
        let breaker = CircuitBreaker(
            policy: .init(failureRatio: 0.5, minimumCalls: 20, breakDuration: breakDuration),
            onTransition: { change in transitions.withLockedValue { $0.append(change) } })
        let executor = NIOExecutor(transport: transport).with(RetryMiddleware(policy: Self.retrying), breaker)
        let outcomes = await Self.run(executor, url: origin.url)
        let failedFast = outcomes.filter {
            if case .failure(let error) = $0, case .circuitOpen = error.cause { return true }
            return false
        }.count
        let reached = try await Self.requests(key: origin.key)
        // It opens on the 20th failure; what was in flight then (up to one per caller) still lands.
        #expect(reached <= 20 + Self.callers * 3, "\(reached) requests reached the failing origin")
        #expect(failedFast >= calls - reached, "\(failedFast) calls failed at once")
        #expect(transitions.withLockedValue { $0.first?.to } == .open)

        // The origin recovers; after the break one trial call goes through (the others would
        // fail at once while it is under way) and closes the breaker; then every call succeeds.
        let hostile = try servers().hostile
        try await Self.setMode("ok", hostile: hostile, key: origin.key)
        try await Task.sleep(for: breakDuration)
        #expect(try await executor.send(.get |> url(origin.url)).status == 200)
        #expect(breaker.state(for: .get |> url(origin.url)) == .closed)
        #expect(transitions.withLockedValue { $0.map(\.to) }.suffix(2) == [.halfOpen, .closed])
        let recovered = await Self.run(executor, url: origin.url)
        #expect(recovered.allSatisfy { (try? $0.get()) == 200 }, "calls failed after the origin recovered")
        print("fleet: with a breaker, \(reached) of \(calls) calls' requests reached the failing origin; \(failedFast) failed at once")
    }

    /// An origin that stops answering: each attempt runs out of its own time (and is closed, which
    /// the server sees), the budget keeps retries to a fifth of the calls, and the breaker, which
    /// counts a timeout inside it as a failure, stops the load and lets it back after recovery.
    @Test func anOriginThatStopsAnsweringTimesOutEachAttemptAndTheStackHoldsTheLoad() async throws {
        let callsEach = 5
        let calls = Self.callers * callsEach
        // A connection for every attempt: with the default eight, half the callers would wait in
        // the pool's line for their whole 200 ms and never reach the origin.
        let transport = try NIOTransport(configuration: .init(connectionsPerHost: 2 * Self.callers))
        defer { Task { await transport.shutdown() } }
        let limit = AttemptTimeoutMiddleware(.milliseconds(200))

        let unbudgeted = try await Self.origin("hang")
        let plain = NIOExecutor(transport: transport).with(
            resilience: ResilienceStack(retry: RetryMiddleware(policy: Self.retrying), attemptTimeout: limit))
        _ = await Self.run(plain, url: unbudgeted.url, callsEach: callsEach)
        let without = try await Self.requests(key: unbudgeted.key)
        // Three attempts a call, each sent unless the machine is too busy to connect within its
        // 200 ms: printed, bounded only from above.
        #expect(without <= calls * 3)

        let budgeted = try await Self.origin("hang")
        let budget = RetryBudget(ratio: 0.2, minimumPerSecond: 0)
        let retrying = NIOExecutor(transport: transport).with(
            resilience: ResilienceStack(retry: RetryMiddleware(policy: Self.retrying, budget: budget), attemptTimeout: limit))
        let outcomes = await Self.run(retrying, url: budgeted.url, callsEach: callsEach)
        #expect(outcomes.allSatisfy { if case .failure(let error) = $0, case .timedOut = error.cause { true } else { false } })
        let reached = try await Self.requests(key: budgeted.key)
        #expect(Double(reached) / Double(calls) <= 1.2, "\(reached) requests for \(calls) calls")
        // Every attempt that ran out of time closed its connection.
        let closed = try await Self.disconnects(key: budgeted.key, reaching: reached)
        #expect(closed == reached)

        let origin = try await Self.origin("hang")
        let breakDuration = Duration.milliseconds(200)
        let breaker = CircuitBreaker(policy: .init(failureRatio: 0.5, minimumCalls: 20, breakDuration: breakDuration))
        let guarded = NIOExecutor(transport: transport).with(
            resilience: ResilienceStack(retry: RetryMiddleware(policy: Self.retrying), breaker: breaker, attemptTimeout: limit))
        let guardedOutcomes = await Self.run(guarded, url: origin.url)
        let failedFast = guardedOutcomes.filter {
            if case .failure(let error) = $0, case .circuitOpen = error.cause { return true }
            return false
        }.count
        let held = try await Self.requests(key: origin.key)
        #expect(held <= 20 + Self.callers * 3, "\(held) requests reached the silent origin")
        #expect(failedFast >= Self.callers * Self.callsEach - held)
        try await Self.setMode("ok", hostile: try servers().hostile, key: origin.key)
        try await Task.sleep(for: breakDuration)
        // The trial call after recovery goes through the same breaker, without the 200 ms an
        // attempt had above: under ThreadSanitizer on two busy cores a new connection's answer
        // can take longer, and a trial that timed out would open the breaker again.
        let recovering = NIOExecutor(transport: transport).with(
            resilience: ResilienceStack(retry: RetryMiddleware(policy: Self.retrying), breaker: breaker, attemptTimeout: AttemptTimeoutMiddleware(.seconds(60))))
        #expect(try await recovering.send(.get |> url(origin.url)).status == 200)
        #expect(breaker.state(for: .get |> url(origin.url)) == .closed)
        print(
            "fleet: a silent origin (200 ms per attempt) received \(without) requests for \(calls) calls without a budget, \(reached) with one;"
                + " with a breaker \(held) of \(Self.callers * Self.callsEach) calls' requests, \(failedFast) failed at once")
    }

    /// A server with a slow tail (one request in twenty takes a second): hedging after 50 ms takes
    /// the slow calls out of the 99th percentile, within the retry budget, and every losing
    /// attempt it cancels is closed. The percentiles are printed, not asserted: they measure the
    /// machine as much as the middleware; the budget and the hedges are asserted.
    @Test func hedgingTakesASlowTailOutOfTheNinetyNinthPercentileWithinTheBudget() async throws {
        let calls = Self.callers * Self.callsEach
        // Room for every caller and its hedge: with the default eight connections per host, the
        // held requests fill the pool and the other calls (hedges included) wait in its line.
        let transport = try NIOTransport(configuration: .init(connectionsPerHost: 2 * Self.callers))
        defer { Task { await transport.shutdown() } }

        func measure(_ executor: NIOExecutor, url address: String) async -> (latencies: [Duration], statuses: [Int], won: Int) {
            let clock = ContinuousClock()
            let won = NIOLockedValueBox(0)
            let results = await withTaskGroup(of: [(Duration, Int)].self) { group in
                for _ in 0..<Self.callers {
                    group.addTask {
                        var results: [(Duration, Int)] = []
                        for _ in 0..<Self.callsEach {
                            let start = clock.now
                            let status = await ResilienceEvent.observing({ event in
                                if event.kind == .hedgeWon { won.withLockedValue { $0 += 1 } }
                            }) { (try? await executor.send(.get |> url(address)).status) ?? 0 }
                            results.append((clock.now - start, status))
                        }
                        return results
                    }
                }
                return await group.reduce(into: []) { $0 += $1 }
            }
            return (results.map(\.0), results.map(\.1), won.withLockedValue { $0 })
        }

        let plainOrigin = try await Self.origin("tail")
        let plain = await measure(NIOExecutor(transport: transport), url: plainOrigin.url)
        #expect(plain.statuses.allSatisfy { $0 == 200 })
        #expect(try await Self.requests(key: plainOrigin.key) == calls)

        let hedgedOrigin = try await Self.origin("tail")
        let budget = RetryBudget(ratio: 0.2, minimumPerSecond: 0)
        let hedging = HedgingMiddleware(delay: .fixed(.milliseconds(50)), budget: budget)
        let hedged = await measure(NIOExecutor(transport: transport).with(hedging), url: hedgedOrigin.url)
        #expect(hedged.statuses.allSatisfy { $0 == 200 })
        let reached = try await Self.requests(key: hedgedOrigin.key)
        #expect(Double(reached) / Double(calls) <= 1.2, "\(reached) requests for \(calls) calls")
        #expect(hedged.won >= 1, "no hedge won against a one-second tail")
        print(
            "fleet: a slow tail (1 request in 20 takes 1 s), \(calls) calls: p50 \(Self.milliseconds(Self.percentile(0.5, of: plain.latencies))) ms,"
                + " p99 \(Self.milliseconds(Self.percentile(0.99, of: plain.latencies))) ms without hedging;"
                + " p50 \(Self.milliseconds(Self.percentile(0.5, of: hedged.latencies))) ms,"
                + " p99 \(Self.milliseconds(Self.percentile(0.99, of: hedged.latencies))) ms hedged after 50 ms"
                + " (\(reached) requests, \(hedged.won) hedges won)")
    }

    /// An origin that allows forty requests a second and says so (`RateLimit`, `RateLimit-Policy`,
    /// then 429 with `Retry-After`): without pacing the callers spend the quota at once and are
    /// refused; with `ServerPacing` they wait for the reset it announces instead.
    @Test func serverPacingWaitsForTheAnnouncedResetInsteadOfBeingRefused() async throws {
        let callsEach = 10
        let calls = Self.callers * callsEach
        let transport = try NIOTransport(configuration: .init(connectionsPerHost: 2 * Self.callers))
        defer { Task { await transport.shutdown() } }
        let hostile = try servers().hostile

        func runAll(_ executor: NIOExecutor, key: String) async -> [Int] {
            await withTaskGroup(of: [Int].self) { group in
                for _ in 0..<Self.callers {
                    group.addTask {
                        var statuses: [Int] = []
                        for _ in 0..<callsEach {
                            let request = Request.get |> url(hostile + "/rate-limited") |> query("key", key) |> query("limit", 40)
                            statuses.append((try? await executor.send(request).status) ?? 0)
                        }
                        return statuses
                    }
                }
                return await group.reduce(into: []) { $0 += $1 }
            }
        }

        let plainKey = UUID().uuidString
        let plain = await runAll(NIOExecutor(transport: transport), key: plainKey)
        let without = try await Self.count(key: plainKey)
        #expect(plain.allSatisfy { $0 == 200 || $0 == 429 })

        let pacedKey = UUID().uuidString
        let paced = await runAll(NIOExecutor(transport: transport).with(ServerPacing(maximumWait: .seconds(5))), key: pacedKey)
        let with = try await Self.count(key: pacedKey)
        #expect(paced.allSatisfy { $0 == 200 || $0 == 429 })
        #expect(with.requests == calls)
        // A slow machine spreads the unpaced calls over more windows too: the comparison holds
        // however fast it is, the figures are printed.
        #expect(with.refused <= without.refused)
        print(
            "fleet: an origin allowing 40 requests a second, \(calls) calls: \(without.refused) refused with 429 without pacing,"
                + " \(with.refused) with ServerPacing")
    }
}
