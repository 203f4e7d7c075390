import CoreMetrics
import Courier
import CourierMetrics
import Foundation
import MetricsTestKit
import Testing

/// OpenTelemetry's HTTP client metrics, checked against swift-metrics' test kit.
@Suite("MetricsMiddleware")
struct MetricsMiddlewareTests {
    static let request = Request.get |> baseURL("https://api.test/v1") |> path("items", "42") |> query("token", "s3cr3t")
    static let base = [("http.request.method", "GET"), ("server.address", "api.test"), ("server.port", "443"), ("url.scheme", "https")]

    @Test func aResponseRecordsDurationSizeAndActiveRequests() async throws {
        let metrics = TestMetrics()
        let server = InMemoryExecutor.scripted([], then: .text("hello"))
        _ = try await server.with(MetricsMiddleware(factory: metrics)).send(Self.request)
        let dimensions = Self.base + [("http.response.status_code", "200")]
        let duration = try metrics.expectTimer("http.client.request.duration", dimensions)
        #expect(duration.values.count == 1)
        #expect(try metrics.expectRecorder("http.client.response.body.size", dimensions).values == [5])
        let active = try metrics.expectMeter("http.client.active_requests", Self.base)
        #expect(active.values == [1, 0])
    }

    @Test func errorStatusesAndFailuresCarryTheirErrorType() async throws {
        let metrics = TestMetrics()
        // Refused, not lost: a lost connection would be sent once more by the exchange (as on
        // the network), and the script's next answer would succeed.
        let lost = CourierError(.transport(TransportFailure(.cannotConnect, message: "refused")))
        let server = InMemoryExecutor.scripted([.status(503), .failure(lost)], then: .text("ok"))
        let executor = server.with(MetricsMiddleware(factory: metrics))
        _ = try await executor.send(Self.request)
        _ = try? await executor.send(Self.request)
        _ = try metrics.expectTimer(
            "http.client.request.duration", Self.base + [("http.response.status_code", "503"), ("error.type", "503")])
        _ = try metrics.expectTimer("http.client.request.duration", Self.base + [("error.type", "cannotConnect")])
        #expect(try metrics.expectMeter("http.client.active_requests", Self.base).lastValue == 0)
    }

    @Test func resilienceDecisionsInsideAreCountedByKindAndPacingWaitsTimed() async throws {
        let metrics = TestMetrics()
        let clock = ManualClock()
        let breaker = CircuitBreaker(policy: .init(failureRatio: 1, minimumCalls: 1, breakDuration: .seconds(60)), clock: clock)
        let pacing = ServerPacing(clock: clock)
        let server = InMemoryExecutor.scripted(
            [.status(500, headers: ["Retry-After": "2", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "2"])], then: .status(200))
        let executor = server.with(resilience: ResilienceStack(pacing: pacing, breaker: breaker)).with(MetricsMiddleware(factory: metrics))
        _ = try await executor.send(Self.request)
        // Paced for 2 s, then refused by the open breaker.
        let call = Task { try await executor.send(Self.request) }
        try await clock.waitForSleepers(1)
        clock.advance(by: .seconds(2))
        _ = try? await call.value
        for kind in ["circuit_opened", "paced", "circuit_rejected"] {
            let counter = try metrics.expectCounter("courier.client.resilience.events", Self.base + [("courier.resilience.event", kind)])
            #expect(counter.totalValue == 1, "\(kind)")
        }
        #expect(try metrics.expectTimer("courier.client.rate_limit.wait", Self.base).values == [2_000_000_000])
    }

    @Test func aResponseThatWentThroughTheCacheSaysHow() async throws {
        let metrics = TestMetrics()
        let server = InMemoryExecutor.scripted([], then: .status(200, headers: ["Cache-Control": "max-age=60"], body: Data("c".utf8)))
        let executor = server.eachHop(HTTPCache()).with(MetricsMiddleware(factory: metrics))
        _ = try await executor.send(Self.request)
        _ = try await executor.send(Self.request)
        for status in ["miss", "hit"] {
            let dimensions = Self.base + [("http.response.status_code", "200"), ("courier.cache.status", status)]
            #expect(try metrics.expectTimer("http.client.request.duration", dimensions).values.count == 1)
        }
    }

    @Test func aStreamIsTimedToItsEndAndNeverBuffered() async throws {
        let metrics = TestMetrics()
        let server = InMemoryExecutor.scripted([], then: .stream([Data("ab".utf8), Data("cde".utf8)]))
        let response = try await server.with(MetricsMiddleware(factory: metrics)).stream(Self.request)
        #expect(response.body.bufferedData == nil)
        #expect(try metrics.expectMeter("http.client.active_requests", Self.base).lastValue == 1)
        #expect(!metrics.timers.contains { $0.label == "http.client.request.duration" })
        _ = try await response.body.collect(upTo: 1 << 20)
        let dimensions = Self.base + [("http.response.status_code", "200")]
        #expect(try metrics.expectRecorder("http.client.response.body.size", dimensions).values == [5])
        #expect(try metrics.expectMeter("http.client.active_requests", Self.base).lastValue == 0)
    }

    /// A transport that reports a hop's phases (as CourierNIO does): queued 1 ms, dns 2 ms,
    /// connect 3 ms, tls 4 ms, the head 20 ms in, over HTTP/2.
    private struct Phased: Transport {
        func send(hop request: Request, options: StreamOptions) async throws -> StreamedResponse {
            if let timings = options.timings {
                let base = ContinuousClock.now
                var at = 0
                for (phase, milliseconds) in [(HopTimings.Phase.queued, 1), (.dns, 2), (.connect, 3), (.tls, 4)] {
                    timings.begin(phase, at: base + .milliseconds(at))
                    at += milliseconds
                    timings.end(phase, at: base + .milliseconds(at))
                }
                timings.mark(.firstByte, at: base + .milliseconds(20))
                timings.connection(.new, protocol: "h2", remoteAddress: "127.0.0.1:443")
            }
            return StreamedResponse(status: 200, body: ByteStream(Data("ok".utf8)))
        }
    }

    @Test func theHopsPhasesAreTimersOfTheirOwnAndTheProtocolVersionADimension() async throws {
        let metrics = TestMetrics()
        _ = try await Exchange(transport: Phased()).with(MetricsMiddleware(factory: metrics)).send(Self.request)
        let hop = Self.base + [("network.protocol.version", "2")]
        let expected: [(String, [(String, String)], Int64)] = [
            ("http.client.request.time_in_queue", hop, 1), ("dns.lookup.duration", hop + [("dns.question.name", "api.test")], 2),
            ("courier.client.connect.duration", hop, 3), ("courier.client.tls.handshake.duration", hop, 4),
        ]
        for (label, dimensions, milliseconds) in expected {
            let timer = try metrics.expectTimer(label, dimensions)
            #expect(timer.values == [milliseconds * 1_000_000], "\(label)")
        }
        let firstByte = try metrics.expectTimer("courier.client.time_to_first_byte", hop)
        #expect(firstByte.values.count == 1 && (firstByte.values.first ?? 0) >= 20_000_000)
        let duration = try metrics.expectTimer("http.client.request.duration", hop + [("http.response.status_code", "200")])
        #expect(duration.values.count == 1)
        // A transport that reports nothing of its connection: no phase timers at all.
        let plain = TestMetrics()
        _ = try await InMemoryExecutor.scripted([], then: .text("ok")).with(MetricsMiddleware(factory: plain)).send(Self.request)
        let labels = Set(plain.timers.map(\.label))
        #expect(labels == ["http.client.request.duration", "courier.client.time_to_first_byte"])
    }

    @Test func requestBodiesAreSizedAndNoPathQueryOrValueBecomesADimension() async throws {
        let metrics = TestMetrics()
        let server = InMemoryExecutor.scripted([], then: .status(201))
        _ = try await server.with(MetricsMiddleware(factory: metrics)).send(
            Request.post |> baseURL("http://127.0.0.1:8080") |> path("users", "alice") |> bearer("t0ken") |> body(Data(count: 12)))
        let base = [("http.request.method", "POST"), ("server.address", "127.0.0.1"), ("server.port", "8080"), ("url.scheme", "http")]
        #expect(try metrics.expectRecorder("http.client.request.body.size", base).values == [12])
        let everything = (metrics.timers.map { "\($0.label) \($0.dimensions)" } + metrics.recorders.map { "\($0.label) \($0.dimensions)" })
            .joined(separator: "\n")
        for leaked in ["alice", "t0ken", "s3cr3t", "/users"] { #expect(!everything.contains(leaked)) }
    }

    /// A generated client's operation that declares no content drops its body unread: an empty
    /// body complete with the head, or one the reader leaves unread, is no `cancelled` error,
    /// and a 404 keeps its status-based `error.type`.
    @Test func bodiesLeftUnreadAreNotErrorsAndKeepTheStatusErrorType() async throws {
        for stub in [Stub.stream([], status: 204, headers: [.contentLength: "0"]), .stream([Data("not read".utf8)], status: 200)] {
            let metrics = TestMetrics()
            do {
                let response = try await InMemoryExecutor { _ in stub }.with(MetricsMiddleware(factory: metrics)).stream(Self.request)
                _ = response.status  // the body is dropped unread
            }
            let timer = try #require(metrics.timers.first)
            #expect(!timer.dimensions.contains { $0.0 == "error.type" }, "\(timer.dimensions)")
            #expect(try metrics.expectMeter("http.client.active_requests", Self.base).lastValue == 0)
        }
        let metrics = TestMetrics()
        do {
            _ = try await InMemoryExecutor { _ in .stream([Data("gone".utf8)], status: 404) }.with(MetricsMiddleware(factory: metrics))
                .stream(Self.request)
        }
        _ = try metrics.expectTimer("http.client.request.duration", Self.base + [("http.response.status_code", "404"), ("error.type", "404")])
    }
}
