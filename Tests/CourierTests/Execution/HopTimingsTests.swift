import Courier
import Foundation
import Testing

/// Per-hop timings: recorded only when something reads them, one recorder per hop, what the
/// transport reports kept and what it leaves filled by the exchange, and HAR's phases from them.
@Suite("Hop timings: the phases of a hop, as its transport reports them")
struct HopTimingsTests {
    /// A transport that reports a fixed story, in milliseconds from the moment it was handed the
    /// hop: queued 0–1, dns 1–3, connect 3–4, tls 4–7, request 7–8; then answers with a body in
    /// hand, or a stream whose end it records when `streamEnd` is given.
    private struct Scripted: Transport {
        var streams = false
        let seen = Box([Bool]())

        func send(hop request: Request, options: StreamOptions) async throws -> StreamedResponse {
            seen.withLock { $0.append(options.timings != nil) }
            if let timings = options.timings {
                let base = ContinuousClock.now
                func at(_ milliseconds: Int) -> ContinuousClock.Instant { base + .milliseconds(milliseconds) }
                timings.begin(.queued, at: at(0))
                timings.end(.queued, at: at(1))
                timings.begin(.dns, at: at(1))
                timings.end(.dns, at: at(3))
                timings.begin(.connect, at: at(3))
                timings.end(.connect, at: at(4))
                timings.begin(.tls, at: at(4))
                timings.end(.tls, at: at(7))
                timings.mark(.requestStarted, at: at(7))
                timings.mark(.requestSent, at: at(8))
                timings.mark(.firstByte, at: at(12))
                timings.connection(.new, protocol: "h2", remoteAddress: "127.0.0.1:8443")
            }
            if request.path == "/moved" {
                return StreamedResponse(status: 302, headers: ["Location": "/done"], body: ByteStream(Data()))
            }
            guard streams else { return StreamedResponse(status: 200, body: ByteStream(Data("hello".utf8))) }
            let (stream, continuation) = ByteStream.makeStream()
            let timings = options.timings
            Task {
                continuation.yield(Data("hel".utf8))
                continuation.yield(Data("lo".utf8))
                timings?.mark(.bodyEnded)
                continuation.finish()
            }
            return StreamedResponse(status: 200, body: stream)
        }
    }

    /// A hop middleware that reads the timings of every hop it sees.
    private struct Reader: HopTimingsObserver {
        let seen: Box<[HopTimings?]>
        func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
            let response = try await next(request)
            seen.withLock { $0.append(response.timings) }
            return response
        }
    }

    private static let request = Request.get |> url("https://api.test/done")

    @Test func nothingIsRecordedUnlessSomethingReadsIt() async throws {
        let transport = Scripted()
        let response = try await Exchange(transport: transport).stream(Self.request)
        #expect(response.timings == nil)
        #expect(transport.seen.withLock { $0 } == [false], "the transport was handed no recorder")
    }

    @Test func recordingTimingsHandsTheTransportARecorderAndTheResponseItsTimings() async throws {
        let transport = Scripted()
        let executor = Exchange(transport: transport).recordingTimings()
        let response = try await executor.stream(Self.request)
        let timings = try #require(response.timings)
        #expect(transport.seen.withLock { $0 } == [true])
        #expect(timings.queued?.duration == .milliseconds(1))
        #expect(timings.dns?.duration == .milliseconds(2))
        #expect(timings.connect?.duration == .milliseconds(1))
        #expect(timings.tls?.duration == .milliseconds(3))
        #expect(timings.tls?.start == timings.connect?.end)
        #expect(timings.requestSent.map { $0 - (timings.requestStarted ?? .zero) } == .milliseconds(1))
        #expect(timings.connection == .new)
        #expect(timings.negotiatedProtocol == "h2")
        #expect(timings.remoteAddress == "127.0.0.1:8443")
        // The body was in hand when the head came: the exchange ended it; the transport's own
        // first byte (12 ms in) is kept, not replaced by the moment the exchange saw the head.
        #expect(timings.bodyEnded != nil)
        let firstByte = try #require(timings.firstByte)
        #expect(firstByte - (timings.requestSent ?? .zero) == .milliseconds(4))
        #expect(!Exchange(transport: transport).recordingTimings().recordingTimings(false).exchange.recordsTimings)
    }

    @Test func aTimingsObserverTurnsRecordingOnForItselfAndEachHopHasItsOwn() async throws {
        let seen = Box([HopTimings?]())
        let executor = Exchange(transport: Scripted()).eachHop(Reader(seen: seen))
        #expect(!executor.recordsTimings, "the flag stays the caller's; the observer asks by itself")
        let response = try await executor.stream(Request.get |> url("https://api.test/moved"))
        #expect(response.status == 200)
        let hops = seen.withLock { $0 }
        #expect(hops.count == 2)
        #expect(hops.allSatisfy { $0?.dns?.duration == .milliseconds(2) })
        let starts = hops.compactMap { $0?.startedAt }
        #expect(starts.count == 2 && starts[0] <= starts[1])
        // Per call, the observer reads the last hop's timings.
        let calls = Box([HopTimings?]())
        let perCall = try await Exchange(transport: Scripted()).with(Reader(seen: calls)).stream(Request.get |> url("https://api.test/moved"))
        #expect(perCall.timings != nil)
        #expect(calls.withLock { $0.count } == 1)
    }

    @Test func aStreamedBodyEndsWhenTheTransportSaysSo() async throws {
        let executor = Exchange(transport: Scripted(streams: true)).recordingTimings()
        let response = try await executor.stream(Self.request)
        let body = try await response.body.collect(upTo: 100)
        #expect(String(decoding: body, as: UTF8.self) == "hello")
        let timings = try #require(response.timings)
        #expect(timings.bodyEnded != nil, "the transport marked the end before finishing the stream")
    }

    @Test func aTransportThatReportsNothingStillHasItsHeadAndBodyMarked() async throws {
        let executor = InMemoryExecutor(routes: [.init(.get, "/done", .text("ok"))]).recordingTimings()
        let response = try await executor.stream(Self.request)
        let timings = try #require(response.timings)
        #expect(timings.firstByte != nil)
        #expect(timings.bodyEnded != nil)
        #expect(timings.dns == nil && timings.connection == nil)
        // A cache answer or a stub a middleware made has no hop: no timings.
        struct Answer: Middleware {
            func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
                StreamedResponse(status: 204, body: ByteStream(Data()))
            }
        }
        #expect(try await executor.with(Answer()).stream(Self.request).timings == nil)
    }

    @Test func theRecorderKeepsFirstMarksRestartsPhasesAndIgnoresStrayEnds() {
        let recorder = HopTimings.Recorder()
        let base = ContinuousClock.now
        recorder.end(.tls, at: base + .milliseconds(5))
        #expect(recorder.timings.tls == nil, "an end without its beginning is ignored")
        recorder.begin(.connect, at: base + .milliseconds(1))
        recorder.end(.connect, at: base + .milliseconds(2))
        recorder.begin(.connect, at: base + .milliseconds(10))
        #expect(recorder.timings.connect?.duration == .zero, "begun again: it starts over")
        recorder.end(.connect, at: base + .milliseconds(8))
        #expect(recorder.timings.connect?.duration == .zero, "an end before the start counts as the start")
        recorder.mark(.firstByte, at: base + .milliseconds(20))
        recorder.mark(.firstByte, at: base + .milliseconds(30))
        #expect(recorder.timings.firstByte.map { $0 - (recorder.timings.connect?.start ?? .zero) } == .milliseconds(10))
        recorder.mark(.requestStarted, at: base - .seconds(5))
        #expect(recorder.timings.requestStarted == .zero, "before the recorder: its start")
        recorder.connection(.reused)
        recorder.connection(nil, protocol: "http/1.1")
        #expect(recorder.timings.connection == .reused && recorder.timings.negotiatedProtocol == "http/1.1")
    }

    @Test func theDescriptionNamesWhatWasRecordedInMilliseconds() {
        var timings = HopTimings(startedAt: Date(timeIntervalSince1970: 0))
        #expect(timings.description == "nothing recorded")
        timings.dns = .init(start: .zero, end: .microseconds(410))
        timings.tls = .init(start: .milliseconds(1), end: .milliseconds(4))
        timings.firstByte = .milliseconds(5)
        timings.connection = .new
        timings.negotiatedProtocol = "h2"
        timings.remoteAddress = "[::1]:443"
        #expect(timings.description == "dns 0.41 ms, tls 3.0 ms, first byte at 5.0 ms; new connection, h2, to [::1]:443")
        #expect(timings.date(at: .seconds(2)) == Date(timeIntervalSince1970: 2))
        #expect(timings[.dns] == timings.dns && timings[.firstByte] == .milliseconds(5))
    }

    @Test func harTimingsFollowTheHopsPhasesAndTimeIsTheirSum() async throws {
        let recorder = HARRecorder()
        _ = try await Exchange(transport: Scripted()).eachHop(recorder).send(Self.request)
        let entry = try #require(recorder.entries.first)
        let timings = entry.timings
        #expect(timings.dns == 2)
        #expect(timings.ssl == 3)
        #expect(timings.connect == 4, "HAR counts ssl inside connect")
        #expect(timings.send == 1)
        #expect(timings.wait == 4)
        let blocked = try #require(timings.blocked)
        #expect(blocked >= 1, "at least the pool wait")
        #expect(timings.receive >= 0)
        let sum = blocked + 2 + 4 + 1 + 4 + timings.receive
        #expect(abs(entry.time - sum) < 0.002)
        // Without timings (a middleware answered) the whole exchange is `wait`, as before.
        struct Answer: Middleware {
            func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
                StreamedResponse(status: 204, body: ByteStream(Data()))
            }
        }
        let cached = HARRecorder()
        _ = try await Exchange(transport: Scripted()).eachHop(cached, Answer()).send(Self.request)
        let plain = try #require(cached.entries.first?.timings)
        #expect(plain.dns == -1 && plain.connect == -1 && plain.send == 0)
    }
}

/// A hop that fails carries what was measured up to the failure: in the error, in the HAR
/// entry, in the log line (OkHttp's `connectFailed` and `callFailed` report the same).
@Suite("Hop timings: a failed hop keeps what was measured")
struct FailedHopTimingsTests {
    /// A transport that resolves, then is refused while connecting; or that fails its handshake.
    private struct Refusing: Transport {
        var failsInHandshake = false

        func send(hop request: Request, options: StreamOptions) async throws -> StreamedResponse {
            // A story told in instants from now on (the recorder counts times before it as its
            // start): the failure comes "earlier" than the connect's start, which then ends there.
            let base = ContinuousClock.now
            options.timings?.begin(.dns, at: base)
            options.timings?.end(.dns, at: base + .milliseconds(2))
            options.timings?.begin(.connect, at: base + .milliseconds(2))
            if failsInHandshake {
                options.timings?.end(.connect, at: base + .milliseconds(3))
                options.timings?.begin(.tls, at: base + .milliseconds(3))
                throw CourierError(.transport(TransportFailure(.secureConnectionFailed, message: "the certificate has expired")))
            }
            throw CourierError(.transport(TransportFailure(.cannotConnect, message: "the connection was refused")))
        }
    }

    @Test func aRefusedHopKeepsItsLookupAndTheConnectItWasIn() async throws {
        let executor = Exchange(transport: Refusing()).recordingTimings()
        let error = try #require(await #expect(throws: CourierError.self) { try await executor.send(.get |> url("https://api.test/x")) })
        let timings = try #require(error.timings, "\(error)")
        #expect(timings.dns?.duration == .milliseconds(2))
        let connect = try #require(timings.connect)
        let failedAt = try #require(timings.failedAt)
        // The connect under way when it was refused ends where the hop failed (not before it began).
        #expect(connect.end == max(failedAt, connect.start))
        #expect(timings.firstByte == nil && timings.requestStarted == nil)
        #expect(timings.description.contains("failed at"))
    }

    @Test func withoutTimingsAskedForAFailureCarriesNone() async throws {
        let error = try #require(await #expect(throws: CourierError.self) { try await Exchange(transport: Refusing()).send(.get |> url("https://api.test/x")) })
        #expect(error.timings == nil)
    }

    @Test func theHARAndTheLogOfAFailedHopShowItsTimings() async throws {
        let recorder = HARRecorder()
        let lines = Box([String]())
        let executor = Exchange(transport: Refusing(failsInHandshake: true))
            .with(LoggingMiddleware { event in lines.withLock { $0.append(event.description) } }, recorder)
        await #expect(throws: CourierError.self) { try await executor.send(.get |> url("https://api.test/x")) }
        let entry = try #require(recorder.har.log.entries.first)
        #expect(entry.timings.dns == 2)
        #expect((entry.timings.ssl ?? -1) >= 0)
        #expect(entry.timings.receive == 0)
        let failure = try #require(lines.withLock { $0.last })
        #expect(failure.contains("failed:") && failure.contains("the hop: dns 2.0 ms"), "\(failure)")
    }
}
