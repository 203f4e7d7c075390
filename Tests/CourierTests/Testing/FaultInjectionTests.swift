import Courier
import Foundation
import Testing

/// Fault injection by rule and from a recorded HAR, on a `ManualClock`: answers that send
/// nothing, latency, bodies cut short, seeded probabilities, and an outage rehearsed under a
/// retry.
@Suite("FaultInjection: rehearse an outage in a unit test")
struct FaultInjectionTests {
    private static let get = Request.get |> url("https://a.test/items")

    @Test func anAnswerIsInjectedWithoutSendingTheRequest() async throws {
        let origin = InMemoryExecutor.scripted([], then: .status(200))
        let chaos = FaultInjection([.init(.status(503, headers: ["Retry-After": "1"]), when: { $0.url?.path == "/items" })])
        let events = Box([ResilienceEvent]())
        let response = try await ResilienceEvent.observing({ e in events.withLock { $0.append(e) } }) {
            try await origin.with(chaos).send(Self.get)
        }
        #expect(response.status == 503 && response.headers[.retryAfter] == "1")
        #expect(origin.requests.isEmpty, "nothing sent")
        #expect(events.withLock { $0.map(\.description) } == ["fault_injected https://a.test:443 (status 503)"])
        // A request the rule does not match goes through.
        #expect(try await origin.with(chaos).send(.get |> url("https://a.test/other")).status == 200)

        let lost = FaultInjection([.init(.failure(.connectionLost))])
        let error = await #expect(throws: CourierError.self) { _ = try await origin.with(lost).send(Self.get) }
        #expect(error?.errorType == "connectionLost" && error?.isTransient == true)
        let timeout = await #expect(throws: CourierError.self) { _ = try await origin.with(FaultInjection([.init(.timeout)])).send(Self.get) }
        #expect(timeout?.errorType == "timedOut")
    }

    @Test func latencyRunsOnTheClockBeforeTheRequestGoes() async throws {
        let clock = ManualClock()
        let origin = InMemoryExecutor.scripted([], then: .status(200))
        let executor = origin.with(FaultInjection([.init(.latency(.seconds(2))), .init(.latency(.seconds(1)))], clock: clock))
        let call = Task { try await executor.send(Self.get) }
        try await clock.waitForSleepers(1)
        clock.advance(by: .seconds(2))
        try await clock.waitForSleepers(1)
        #expect(origin.requests.isEmpty)
        clock.advance(by: .seconds(1))
        #expect(try await call.value.status == 200)
        #expect(origin.requests.count == 1)
    }

    @Test func aTruncatedBodyFailsAfterItsBytesAndAShortOneArrivesWhole() async throws {
        let body = Data((0..<100).map { UInt8($0) })
        let origin = InMemoryExecutor.scripted([], then: .stream([body.prefix(40), body.dropFirst(40)]))
        let executor = origin.with(FaultInjection([.init(.truncatedBody(afterBytes: 50))]))
        let streamed = try await executor.stream(Self.get)
        var received = Data()
        let error = await #expect(throws: CourierError.self) {
            for try await chunk in streamed.body { received.append(chunk) }
        }
        #expect(received == body.prefix(50))
        #expect(error?.errorType == "truncatedBody")
        let buffered = await #expect(throws: CourierError.self) { _ = try await executor.send(Self.get) }
        #expect(buffered?.errorType == "truncatedBody")
        // A body no longer than the cut is not cut.
        let short = InMemoryExecutor.scripted([], then: .status(200, body: Data("ok".utf8)))
        #expect(try await short.with(FaultInjection([.init(.truncatedBody(afterBytes: 2))])).send(Self.get).body == Data("ok".utf8))
    }

    @Test func aSeededProbabilityFiresTheSameShareEveryRun() async throws {
        func failures(seed: UInt64) async throws -> Int {
            let chaos = FaultInjection([.init(.status(503), probability: 0.1)], random: .seeded(seed))
            let executor = InMemoryExecutor.scripted([], then: .status(200)).with(chaos)
            var count = 0
            for _ in 0..<1000 where try await executor.send(Self.get).status == 503 { count += 1 }
            return count
        }
        let first = try await failures(seed: 7)
        #expect(first == (try await failures(seed: 7)), "deterministic")
        #expect((60...140).contains(first), "about 10%: \(first)")
        // Out-of-range probabilities are clamped.
        #expect(FaultInjection.Rule(.timeout, probability: .nan).probability == 0)
        #expect(FaultInjection.Rule(.timeout, probability: 7).probability == 1)
    }

    @Test func aRecordedOutageIsRehearsedUnderARetry() async throws {
        // A HAR of an incident: a 503 with Retry-After after 3 s, a connection lost, then a 200.
        func entry(status: Int, time: Double, headers: [HAR.NameValue] = []) -> HAR.Entry {
            HAR.Entry(
                startedDateTime: "2026-11-28T04:00:00.000Z", time: time,
                request: HAR.EntryRequest(method: "GET", url: "https://a.test/items", headers: [], queryString: [], postData: nil),
                response: HAR.EntryResponse(
                    status: status, statusText: "", headers: headers, content: HAR.Content(size: 0, mimeType: "", text: nil)),
                timings: HAR.Timings(send: 0, wait: time, receive: 0))
        }
        let har = HAR(
            log: HAR.Log(entries: [
                entry(status: 503, time: 3000, headers: [HAR.NameValue(name: "Retry-After", value: "1")]),
                entry(status: 0, time: 500), entry(status: 200, time: 20),
            ]))
        let clock = ManualClock()
        let origin = InMemoryExecutor.scripted([], then: .status(200))
        let executor = origin.with(
            RetryMiddleware(policy: RetryPolicy(maxAttempts: 4, baseDelay: .seconds(1)), clock: clock, random: .seeded(1)),
            FaultInjection.replaying(har, clock: clock))
        let call = Task { try await executor.send(Self.get) }
        // 3 s of latency, then the 503; the retry waits its Retry-After (1 s).
        for step in [Duration.seconds(3), .seconds(1)] {
            try await clock.waitForSleepers(1)
            clock.advance(by: step)
        }
        // 0.5 s, then the lost connection; the retry's backoff (at most 2 s); then the recorded
        // 20 ms of the success, and the request reaches the executor.
        try await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(500))
        try await clock.waitForSleepers(1)
        clock.advance(by: .seconds(2))
        try await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(20))
        #expect(try await call.value.status == 200)
        #expect(origin.requests.count == 1, "only the last attempt was sent")
        // The outage played once: later calls go straight through.
        #expect(try await executor.send(Self.get).status == 200)
    }
}
