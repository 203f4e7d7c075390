import Courier
import Foundation
import Testing

/// The circuit breaker on a `ManualClock` over the in-memory transport: when it opens (ratio and
/// minimum volume over the window), that an open breaker sends nothing and says when it will try
/// again, half-open trials, what counts as a failure, per origin, and its transitions.
@Suite("CircuitBreaker: stop calling an origin that keeps failing")
struct CircuitBreakerTests {
    private static let a = Request.get |> url("https://a.test/items")
    private static let b = Request.get |> url("https://b.test/items")

    /// An origin answering each request with the next status of a script (the last one repeats).
    private final class Script: Sendable {
        private let statuses: Box<[Int]>
        let executor: InMemoryExecutor

        init(_ statuses: [Int]) {
            let box = Box(statuses)
            self.statuses = box
            executor = InMemoryExecutor { _ in
                let status = box.withLock { statuses in statuses.count > 1 ? statuses.removeFirst() : statuses[0] }
                return .status(status)
            }
        }

        func then(_ statuses: [Int]) { self.statuses.withLock { $0 = statuses } }
    }

    private static func circuitOpen(_ error: CourierError?) -> CircuitOpen? {
        guard case .circuitOpen(let reason)? = error?.cause else { return nil }
        return reason
    }

    @Test func itOpensAtTheRatioOnceTheMinimumVolumeIsReachedAndThenSendsNothing() async throws {
        let clock = ManualClock()
        let origin = Script([200, 503])
        let transitions = Box([CircuitBreaker.Transition]())
        let breaker = CircuitBreaker(
            policy: .init(failureRatio: 0.5, minimumCalls: 10, breakDuration: .seconds(15)), clock: clock,
            onTransition: { change in transitions.withLock { $0.append(change) } })
        let executor = origin.executor.with(breaker)
        // One success, then failures: 9 calls are below the minimum volume, the 10th opens it.
        for _ in 0..<9 { _ = try await executor.stream(Self.a) }
        #expect(breaker.state(for: Self.a) == .closed)
        _ = try await executor.stream(Self.a)
        #expect(breaker.state(for: Self.a) == .open)
        #expect(transitions.withLock { $0.map(\.description) } == ["https://a.test:443: closed → open"])
        let sent = origin.executor.requests.count
        clock.advance(by: .seconds(5))
        let error = await #expect(throws: CourierError.self) { _ = try await executor.stream(Self.a) }
        let reason = try #require(Self.circuitOpen(error))
        #expect(reason.origin == "https://a.test:443")
        #expect(reason.retryAfter == .seconds(10))
        #expect(error?.isTransient == false, "a retry middleware outside does not hammer it")
        #expect(error?.errorType == "circuitOpen")
        let text = "\(String(describing: error))"
        #expect(text.contains("circuit breaker for https://a.test:443 is open") && text.contains("in 10.0 s"), "\(text)")
        #expect(origin.executor.requests.count == sent, "an open breaker sends nothing")
        // Another origin is not affected.
        #expect(breaker.state(for: Self.b) == .closed)
    }

    @Test func halfOpenLetsOneTrialThroughAndItsOutcomeDecides() async throws {
        let clock = ManualClock()
        let origin = Script([503])
        let transitions = Box([String]())
        let breaker = CircuitBreaker(
            policy: .init(failureRatio: 1, minimumCalls: 2, breakDuration: .seconds(30), trialCalls: 1), clock: clock,
            onTransition: { change in transitions.withLock { $0.append("\(change.from.rawValue)→\(change.to.rawValue)") } })
        let executor = origin.executor.with(breaker)
        for _ in 0..<2 { _ = try await executor.stream(Self.a) }
        #expect(breaker.state(for: Self.a) == .open)
        clock.advance(by: .seconds(30))
        // The trial fails: open again, for a whole break.
        #expect(try await executor.stream(Self.a).status == 503)
        #expect(breaker.state(for: Self.a) == .open)
        let reopened = await #expect(throws: CourierError.self) { _ = try await executor.stream(Self.a) }
        #expect(Self.circuitOpen(reopened)?.retryAfter == .seconds(30))
        clock.advance(by: .seconds(30))
        // The next trial succeeds: closed, and counting starts afresh.
        origin.then([200])
        #expect(try await executor.stream(Self.a).status == 200)
        #expect(breaker.state(for: Self.a) == .closed)
        #expect(transitions.withLock { $0 } == ["closed→open", "open→halfOpen", "halfOpen→open", "open→halfOpen", "halfOpen→closed"])
        origin.then([503])
        _ = try await executor.stream(Self.a)
        #expect(breaker.state(for: Self.a) == .closed, "one failure after closing is below the minimum volume")
    }

    @Test func whileATrialIsUnderWayOtherCallsFailAtOnce() async throws {
        let clock = ManualClock()
        let gate = Box<CheckedContinuation<Void, Never>?>(nil)
        let arrived = Box(false)
        let breaker = CircuitBreaker(policy: .init(failureRatio: 1, minimumCalls: 1, breakDuration: .seconds(1)), clock: clock)
        struct Hold: Middleware {
            let gate: Box<CheckedContinuation<Void, Never>?>
            let arrived: Box<Bool>
            func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
                await withCheckedContinuation { continuation in
                    gate.withLock { $0 = continuation }
                    arrived.withLock { $0 = true }
                }
                return try await next(request)
            }
        }
        let failing = InMemoryExecutor { _ in .status(500) }
        _ = try await failing.with(breaker).stream(Self.a)
        #expect(breaker.state(for: Self.a) == .open)
        clock.advance(by: .seconds(1))
        let ok = InMemoryExecutor { _ in .status(200) }
        let trial = Task { try await ok.with(breaker, Hold(gate: gate, arrived: arrived)).stream(Self.a).status }
        while !arrived.withLock({ $0 }) { await Task.yield() }
        #expect(breaker.state(for: Self.a) == .halfOpen)
        let refused = await #expect(throws: CourierError.self) { _ = try await ok.with(breaker).stream(Self.a) }
        let reason = try #require(Self.circuitOpen(refused))
        #expect(reason.retryAfter == nil)
        #expect("\(reason)".contains("half open"))
        gate.withLock { $0?.resume() }
        #expect(try await trial.value == 200)
        #expect(breaker.state(for: Self.a) == .closed)
    }

    @Test func fourHundredsCancellationsAndDecodingNeverCountButTimeoutsAndLostConnectionsDo() async throws {
        let policy = CircuitBreaker.Policy(failureRatio: 1, minimumCalls: 3)
        let clientErrors = CircuitBreaker(policy: policy, clock: ManualClock())
        let notFound = InMemoryExecutor { _ in .status(404) }
        for _ in 0..<5 { _ = try await notFound.with(clientErrors).stream(Self.a) }
        #expect(clientErrors.state(for: Self.a) == .closed)
        let lost = CircuitBreaker(policy: policy, clock: ManualClock())
        let dropping = InMemoryExecutor { _ in .failure(URLError(.networkConnectionLost)) }
        for _ in 0..<3 { _ = try? await dropping.with(lost).stream(.post |> url("https://a.test/items")) }
        #expect(lost.state(for: Self.a) == .open)
        #expect(CircuitBreaker.Outcome.failure(CourierError(.timedOut)).isServerFailure)
        #expect(!CircuitBreaker.Outcome.failure(CourierError(.cancelled)).isServerFailure)
        #expect(!CircuitBreaker.Outcome.status(429).isServerFailure)
        #expect(CircuitBreaker.Outcome.status(503).isServerFailure)
        // The caller decides: here a 429 counts too.
        let throttled = CircuitBreaker(
            policy: .init(failureRatio: 1, minimumCalls: 2, isFailure: { outcome in
                if case .status(429) = outcome { return true }
                return outcome.isServerFailure
            }), clock: ManualClock())
        let tooMany = InMemoryExecutor { _ in .status(429) }
        for _ in 0..<2 { _ = try await tooMany.with(throttled).stream(Self.a) }
        #expect(throttled.state(for: Self.a) == .open)
    }

    @Test func failuresOlderThanTheWindowNoLongerCount() async throws {
        let clock = ManualClock()
        let breaker = CircuitBreaker(policy: .init(failureRatio: 0.5, minimumCalls: 4, window: .seconds(10)), clock: clock)
        let failing = InMemoryExecutor { _ in .status(500) }.with(breaker)
        let fine = InMemoryExecutor { _ in .status(200) }.with(breaker)
        for _ in 0..<3 { _ = try await failing.stream(Self.a) }
        clock.advance(by: .seconds(11))
        // The three failures are out of the window: one more failure and three successes.
        _ = try await failing.stream(Self.a)
        for _ in 0..<3 { _ = try await fine.stream(Self.a) }
        #expect(breaker.state(for: Self.a) == .closed)
    }

    @Test func anOriginIsNamedByItsSchemeHostAndPortNeverItsUserPathOrQuery() async throws {
        let breaker = CircuitBreaker(policy: .init(failureRatio: 1, minimumCalls: 1), clock: ManualClock())
        for address in ["https://user:s3cret@API.test/items?token=s3cret", "http://user:s3cret@api.test:80/items?access_token=s3cret"] {
            let failing = InMemoryExecutor { _ in .status(500) }.with(breaker)
            _ = try? await failing.stream(.get |> url(address))
            let error = await #expect(throws: CourierError.self) { _ = try await failing.stream(.get |> url(address)) }
            let reason = try #require(Self.circuitOpen(error), "\(address): \(String(describing: error))")
            #expect(!reason.origin.contains("s3cret") && !reason.origin.contains("user"), "\(reason.origin)")
            #expect(!"\(String(describing: error))".contains("s3cret"))
        }
        #expect(breaker.state(for: .get |> url("https://api.test:443/other")) == .open, "the default port and case are one origin")
        #expect(breaker.state(for: .get |> url("http://api.test/")) == .open)
    }

    @Test func hostileSettingsAreClampedAndOriginsBounded() async throws {
        let policy = CircuitBreaker.Policy(
            failureRatio: .nan, minimumCalls: -3, window: .seconds(-1), breakDuration: .seconds(-5), trialCalls: 0)
        #expect(policy.failureRatio == 1 && policy.minimumCalls == 1 && policy.trialCalls == 1)
        #expect(policy.window >= .milliseconds(10) && policy.breakDuration == .zero)
        let breaker = CircuitBreaker(policy: .init(minimumCalls: 1), clock: ManualClock())
        let executor = InMemoryExecutor { _ in .status(200) }.with(breaker)
        for index in 0...CircuitBreaker.maximumOrigins {
            _ = try await executor.stream(.get |> url("https://host\(index).test/"))
        }
        // Nothing to observe but that it still works and answers for the newest origin.
        #expect(breaker.state(for: .get |> url("https://host\(CircuitBreaker.maximumOrigins).test/")) == .closed)
    }
}
