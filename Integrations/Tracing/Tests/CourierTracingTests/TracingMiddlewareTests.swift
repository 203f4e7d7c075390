import Courier
import CourierTracing
import Foundation
import InMemoryTracing
import Instrumentation
import Testing
import Tracing

/// A client span per request, checked against swift-distributed-tracing's in-memory tracer.
@Suite("TracingMiddleware")
struct TracingMiddlewareTests {
    static let request = Request.get |> baseURL("https://user:pa55@api.test/v1") |> path("users", "alice")
        |> query("access_token", "t0ken") |> query("page", 2)

    @Test func aResponseThatWentThroughTheCacheSaysHow() async throws {
        let tracer = InMemoryTracer()
        let server = InMemoryExecutor.scripted([], then: .status(200, headers: ["Cache-Control": "max-age=60"], body: Data("c".utf8)))
        let executor = server.eachHop(HTTPCache()).with(TracingMiddleware(tracer: tracer))
        _ = try await executor.send(.get |> url("https://api.test/cached"))
        _ = try await executor.send(.get |> url("https://api.test/cached"))
        #expect(tracer.finishedSpans.map { $0.attributes["courier.cache.status"]?.toSpanAttribute() } == ["miss", "hit"])
    }

    @Test func hedgesInsideTheSpanAreEventsOfIt() async throws {
        let tracer = InMemoryTracer()
        let clock = ManualClock()
        actor First {
            var pending = true
            func take() -> Bool {
                defer { pending = false }
                return pending
            }
        }
        let first = First()
        let server = InMemoryExecutor(clock: clock) { _ in
            let slow = await first.take()
            try await clock.sleep(for: slow ? .seconds(10) : .milliseconds(5))
            return .status(200)
        }
        let executor = server.with(HedgingMiddleware(delay: .fixed(.milliseconds(50)), clock: clock)).with(TracingMiddleware(tracer: tracer))
        let call = Task { try await executor.send(.get |> url("https://api.test/items?token=s3cr3t")) }
        try await clock.waitForSleepers(2)
        clock.advance(by: .milliseconds(50))
        try await clock.waitForSleepers(2)
        clock.advance(by: .milliseconds(5))
        _ = try await call.value
        let span = try #require(tracer.finishedSpans.first)
        #expect(span.events.map(\.name).filter { $0.hasPrefix("courier.") } == ["courier.resilience.hedge_sent", "courier.resilience.hedge_won"])
        #expect(span.events.first?.attributes["courier.resilience.origin"]?.toSpanAttribute() == "https://api.test:443")
        #expect(span.events.first?.attributes["courier.resilience.attempt"]?.toSpanAttribute() == 2)
        #expect(span.events.first?.attributes["courier.resilience.delay"]?.toSpanAttribute() == 0.05)
    }

    @Test func aRequestGetsAClientSpanWithRedactedAttributes() async throws {
        let tracer = InMemoryTracer()
        let server = InMemoryExecutor.scripted([], then: .text("hello"))
        _ = try await server.with(TracingMiddleware(tracer: tracer)).send(Self.request)
        let span = try #require(tracer.finishedSpans.first)
        #expect(tracer.finishedSpans.count == 1)
        #expect(span.operationName == "GET")
        #expect(span.kind == .client)
        #expect(span.attributes["http.request.method"]?.toSpanAttribute() == "GET")
        #expect(span.attributes["url.full"]?.toSpanAttribute() == "https://<redacted>@api.test/v1/users/alice?access_token=<redacted>&page=2")
        #expect(span.attributes["server.address"]?.toSpanAttribute() == "api.test")
        #expect(span.attributes["server.port"]?.toSpanAttribute() == 443)
        #expect(span.attributes["url.scheme"]?.toSpanAttribute() == "https")
        #expect(span.attributes["http.response.status_code"]?.toSpanAttribute() == 200)
        #expect(span.attributes["http.response.body.size"]?.toSpanAttribute() == 5)
        #expect(span.status == nil)
        let everything = "\(span.attributes)"
        #expect(!everything.contains("t0ken") && !everything.contains("pa55"))
    }

    /// A transport that reports a hop's phases, as CourierNIO does.
    private struct Phased: Transport {
        let streams: Bool
        func send(hop request: Request, options: StreamOptions) async throws -> StreamedResponse {
            if let timings = options.timings {
                let base = ContinuousClock.now
                timings.begin(.dns, at: base)
                timings.end(.dns, at: base + .milliseconds(2))
                timings.begin(.connect, at: base + .milliseconds(2))
                timings.end(.connect, at: base + .milliseconds(3))
                timings.begin(.tls, at: base + .milliseconds(3))
                timings.end(.tls, at: base + .milliseconds(7))
                timings.mark(.requestStarted, at: base + .milliseconds(7))
                timings.mark(.requestSent, at: base + .milliseconds(8))
                timings.mark(.firstByte, at: base + .milliseconds(9))
                timings.connection(.new, protocol: "h2", remoteAddress: "[::1]:8443")
            }
            // The story's body ends 10 ms in, whenever the test gets there.
            let end = ContinuousClock.now + .milliseconds(10)
            guard streams else {
                options.timings?.mark(.bodyEnded, at: end)
                return StreamedResponse(status: 200, body: ByteStream(Data("ok".utf8)))
            }
            let (stream, continuation) = ByteStream.makeStream()
            let timings = options.timings
            Task {
                continuation.yield(Data("ok".utf8))
                timings?.mark(.bodyEnded, at: end)
                continuation.finish()
            }
            return StreamedResponse(status: 200, body: stream)
        }
    }

    @Test(arguments: [false, true])
    func theHopsPhasesAreEventsInOrderAndItsConnectionAttributes(streams: Bool) async throws {
        let tracer = InMemoryTracer()
        let executor = Exchange(transport: Phased(streams: streams)).with(TracingMiddleware(tracer: tracer))
        _ = try await executor.stream(Self.request).collect(upTo: 100)
        let span = try #require(tracer.finishedSpans.first)
        #expect(span.events.map(\.name) == [
            "dns.start", "dns.end", "connect.start", "connect.end", "tls.start", "tls.end", "request.started", "request.sent",
            "response.first_byte", "response.body_end",
        ])
        let times = span.events.map(\.nanosecondsSinceEpoch)
        #expect(times == times.sorted())
        #expect(times[5] - times[4] == 4_000_000, "the TLS handshake took 4 ms")
        #expect(span.attributes["network.protocol.name"]?.toSpanAttribute() == "http")
        #expect(span.attributes["network.protocol.version"]?.toSpanAttribute() == "2")
        #expect(span.attributes["network.peer.address"]?.toSpanAttribute() == "::1")
        #expect(span.attributes["network.peer.port"]?.toSpanAttribute() == 8443)
        #expect(span.attributes["courier.connection.reused"]?.toSpanAttribute() == false)
    }

    @Test func theContextIsInjectedOnceReplacingAnyTraceHeaderAlreadyThere() async throws {
        let tracer = InMemoryTracer()
        let server = InMemoryExecutor.scripted([], then: .status(204))
        _ = try await server.with(TracingMiddleware(tracer: tracer)).send(
            Self.request |> header("traceparent", "00-stale-stale-01") |> header(HeaderName(rawValue: InMemoryTracer.traceIDKey), "stale"))
        let sent = try #require(server.requests.first)
        let span = try #require(tracer.finishedSpans.first)
        #expect(sent.headers.values(for: HeaderName(rawValue: InMemoryTracer.traceIDKey)) == [span.traceID])
        #expect(sent.headers.values(for: HeaderName(rawValue: InMemoryTracer.spanIDKey)) == [span.spanID])
        #expect(sent.headers["traceparent"] == nil)
    }

    /// A body complete with the head ends the span at once; one the reader leaves unread ends
    /// it without an error, marked as left unread.
    @Test func emptyAndUnreadBodiesEndTheSpanWithoutAnError() async throws {
        let tracer = InMemoryTracer()
        let empty = InMemoryExecutor { _ in .stream([], status: 204, headers: [.contentLength: "0"]) }
        let unread = InMemoryExecutor { _ in .stream([Data("never read".utf8)], status: 200) }
        do { _ = try await empty.with(TracingMiddleware(tracer: tracer)).stream(Self.request) }
        do { _ = try await unread.with(TracingMiddleware(tracer: tracer)).stream(Self.request) }
        let spans = tracer.finishedSpans
        try #require(spans.count == 2)
        #expect(spans.allSatisfy { $0.status == nil && $0.errors.isEmpty && $0.attributes["error.type"] == nil })
        #expect(spans[0].attributes["http.response.body.size"]?.toSpanAttribute() == 0)
        #expect(spans[1].attributes["courier.response.body.abandoned"]?.toSpanAttribute() == true)
    }

    @Test func errorStatusesAndFailuresMarkTheSpan() async throws {
        let tracer = InMemoryTracer()
        // Refused, not lost: a lost connection would be sent once more by the exchange (as on
        // the network), and the script's next answer would succeed.
        let lost = CourierError(.transport(TransportFailure(.cannotConnect, message: "refused")))
        let server = InMemoryExecutor.scripted([.status(503), .failure(lost)], then: .text("ok"))
        let executor = server.with(TracingMiddleware(tracer: tracer))
        _ = try await executor.send(Self.request)
        _ = try? await executor.send(Self.request)
        let spans = tracer.finishedSpans
        try #require(spans.count == 2)
        #expect(spans[0].status?.code == .error)
        #expect(spans[0].attributes["error.type"]?.toSpanAttribute() == "503")
        #expect(spans[1].status?.code == .error)
        #expect(spans[1].attributes["error.type"]?.toSpanAttribute() == "cannotConnect")
        #expect(spans[1].errors.count == 1)
    }

    @Test func retriesInsideTheSpanCarryTheirResendCount() async throws {
        let tracer = InMemoryTracer()
        let server = InMemoryExecutor.scripted([.status(503)], then: .text("ok"))
        let retry = RetryMiddleware(policy: RetryPolicy(maxAttempts: 2, baseDelay: .milliseconds(1)))
        _ = try await server.with(retry, TracingMiddleware(tracer: tracer)).send(Self.request)
        let counts = tracer.finishedSpans.map { $0.attributes["http.request.resend_count"]?.toSpanAttribute() }
        #expect(counts == [nil, 1])
    }

    @Test func aStreamedBodyEndsTheSpanWhenTheReaderIsDone() async throws {
        let tracer = InMemoryTracer()
        let server = InMemoryExecutor.scripted([], then: .stream([Data("ab".utf8), Data("cde".utf8)]))
        let response = try await server.with(TracingMiddleware(tracer: tracer) { "\($0.method.rawValue) /users/{id}" }).stream(Self.request)
        #expect(response.body.bufferedData == nil)
        #expect(tracer.finishedSpans.isEmpty)
        _ = try await response.body.collect(upTo: 1 << 20)
        let span = try #require(tracer.finishedSpans.first)
        #expect(span.operationName == "GET /users/{id}")
        #expect(span.attributes["http.response.body.size"]?.toSpanAttribute() == 5)
    }

    @Test func theSpanIsTheParentOfWhatTheTransportDoes() async throws {
        let tracer = InMemoryTracer()
        let seen = Seen()
        let server = InMemoryExecutor(routes: [
            .init(.get, "/v1/users/{id}") { _, _ in
                seen.set(InstrumentationContext.current.flatMap { tracer.activeSpan(identifiedBy: $0)?.spanID })
                return .status(204)
            }
        ])
        _ = try await server.with(TracingMiddleware(tracer: tracer)).send(Self.request)
        let span = try #require(tracer.finishedSpans.first)
        #expect(seen.value == span.spanID)
    }

    /// A value set by a route. `@unchecked Sendable` is sound: only touched while locked.
    final class Seen: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: String?
        func set(_ value: String?) {
            lock.lock()
            stored = value
            lock.unlock()
        }
        var value: String? {
            lock.lock()
            defer { lock.unlock() }
            return stored
        }
    }
}
