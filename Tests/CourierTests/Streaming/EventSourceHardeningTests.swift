import Courier
import Foundation
import Testing

/// A hostile event-stream server must not be able to make the client reconnect in a loop, nor
/// end the stream with an id the client cannot send back.
@Suite("Streaming: event source against hostile servers", .timeLimit(.minutes(1)))
struct EventSourceHardeningTests {
    let api = "https://api.example.com"

    @Test func theServersRetryCannotGoBelowTheFloorAndFailuresStillDoubleIt() {
        let policy = EventSource.ReconnectPolicy()
        #expect(policy.minimumDelay == .milliseconds(100))
        #expect(policy.delay(beforeAttempt: 1, serverRetry: 0) == .milliseconds(100))
        #expect(policy.delay(beforeAttempt: 1, serverRetry: -5) == .milliseconds(100))
        #expect(policy.delay(beforeAttempt: 2, serverRetry: 0) == .milliseconds(200))
        #expect(policy.delay(beforeAttempt: 4, serverRetry: 0) == .milliseconds(800))
        #expect(EventSource.ReconnectPolicy(initialDelay: .zero).initialDelay == .milliseconds(100))
    }

    @Test func aServerThatClosesAtOnceWithRetryZeroIsReconnectedToWithAGrowingWait() async throws {
        // Every connection: `retry: 0`, then the server hangs up without an event.
        let executor = InMemoryExecutor { _ in .stream([Data("retry: 0\n\n".utf8)], headers: [.contentType: "text/event-stream"]) }
        let clock = ManualClock()
        let source = EventSource(.get |> url(api + "/events"), executor: executor, clock: clock)
        let reader = Task { for try await _ in source {} }
        defer { reader.cancel() }
        var waits: [Duration] = []
        for attempt in 1...4 {
            try await clock.waitForSleepers(1)
            #expect(executor.requests.count == attempt)
            // Step the clock until the reconnection wait is over (the sleeper leaves the clock):
            // the steps count the wait in the clock's time, whatever the machine's speed.
            var waited = Duration.zero
            while clock.sleepers > 0 {
                clock.advance(by: .milliseconds(10))
                waited += .milliseconds(10)
            }
            waits.append(waited)
        }
        // 100 ms, then doubling while connections bring nothing (within the 10 ms steps).
        #expect(waits.count == 4)
        #expect(waits[0] >= .milliseconds(100) && waits[0] <= .milliseconds(110))
        #expect(waits[1] >= .milliseconds(200) && waits[1] <= .milliseconds(210))
        #expect(waits[2] >= .milliseconds(400) && waits[2] <= .milliseconds(410))
    }

    @Test func anIDWithAControlCharacterKeepsTheStreamAliveAndIsNotSent() async throws {
        let seen = Box<[String?]>([])
        let executor = InMemoryExecutor { request in
            seen.withLock { $0.append(request.headers[.lastEventID]) }
            if seen.withLock({ $0.count }) > 2 { return .status(204) }
            return .serverSentEvents([ServerSentEvent(data: "hello", id: "bad\u{1}id")])
        }
        let clock = ManualClock()
        let source = EventSource(.get |> url(api + "/events"), executor: executor, clock: clock)
        let reader = Task {
            var events: [ServerSentEvent] = []
            for try await event in source { events.append(event) }
            return events
        }
        for _ in 0..<2 {
            try await clock.waitForSleepers(1)
            clock.advance(by: .seconds(5))
        }
        let events = try await reader.value
        #expect(events.count == 2)
        #expect(events.first?.id == "bad\u{1}id")
        #expect(seen.withLock { $0 } == [nil, nil, nil])
    }
}
