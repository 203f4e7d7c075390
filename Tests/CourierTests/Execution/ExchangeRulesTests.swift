import Courier
import Foundation
import Testing

/// The rules the exchange holds every hop to, once for every transport: the idle timer on a
/// clock (driven here by `ManualClock`: no test waits on the machine's speed), the size limit and
/// the framing check, on bodies in hand and bodies still arriving.
@Suite("Exchange: the idle timer, the size limit and the framing check", .timeLimit(.minutes(1)))
struct ExchangeRulesTests {
    private static let request = Request.get |> url("https://api.test/rules") |> bearer("RULES-SECRET")

    /// A transport that answers once it is cancelled: by throwing, as a network transport does.
    private struct Silent: Transport {
        func send(hop request: Request, options: StreamOptions) async throws -> StreamedResponse {
            try await Task.sleep(for: .seconds(3600))
            throw CancellationError()
        }
    }

    /// A transport that answers with `head` and a body fed by the test through `feed`.
    private struct Live: Transport {
        let headers: HTTPHeaders
        let feed: Box<ByteStream.Continuation?>
        var status = 200

        func send(hop request: Request, options: StreamOptions) async throws -> StreamedResponse {
            let (stream, continuation) = ByteStream.makeStream(bufferLimit: options.bufferLimit)
            feed.withLock { $0 = continuation }
            return StreamedResponse(status: status, headers: headers, body: stream)
        }
    }

    private static func timedOut(_ error: CourierError?) -> Bool {
        guard case .timedOut? = error?.cause else { return false }
        return true
    }

    @Test func aHopWhoseHeadDoesNotComeWithinTheTimeoutFailsWithTimedOut() async throws {
        let clock = ManualClock()
        let exchange = Exchange(transport: Silent(), clock: clock)
        let call = Task { try await exchange.send(Self.request |> timeout(5)) }
        try await clock.waitForSleepers(1)
        clock.advance(by: .seconds(5))
        let error = await #expect(throws: CourierError.self) { _ = try await call.value }
        #expect(Self.timedOut(error))
        #expect(error?.request?.url?.path == "/rules")
        #expect(!"\(String(describing: error))".contains("RULES-SECRET"))
    }

    @Test func aBodyThatStopsArrivingFailsWithTimedOutAndEachChunkRestartsTheWait() async throws {
        let clock = ManualClock()
        let feed = Box<ByteStream.Continuation?>(nil)
        let exchange = Exchange(transport: Live(headers: [:], feed: feed), clock: clock)
        let response = try await exchange.stream(Self.request |> timeout(5))
        let reader = Task {
            var read = 0
            for try await chunk in response.body { read += chunk.count }
            return read
        }
        try await clock.waitForSleepers(1)
        clock.advance(by: .seconds(4))
        // Activity at 4 s: the wait starts again, so 5 s is not the end.
        feed.withLock { $0 }?.yield(Data("abc".utf8))
        clock.advance(by: .seconds(1))
        try await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(3900))
        #expect(feed.withLock { $0 }?.isClosed == false)
        clock.advance(by: .milliseconds(100))
        let error = await #expect(throws: CourierError.self) { _ = try await reader.value }
        #expect(Self.timedOut(error))
        #expect(feed.withLock { $0 }?.isClosed == true)
    }

    @Test func bytesWaitingForASlowReaderDoNotCountAsIdleTime() async throws {
        let clock = ManualClock()
        let feed = Box<ByteStream.Continuation?>(nil)
        let exchange = Exchange(transport: Live(headers: ["Content-Length": "6"], feed: feed), clock: clock)
        let response = try await exchange.stream(Self.request |> timeout(5))
        feed.withLock { $0 }?.yield(Data("abc".utf8))
        try await clock.waitForSleepers(1)
        // Nobody reads for 20 s: the network is not to blame.
        for _ in 0..<4 {
            clock.advance(by: .seconds(5))
            try await clock.waitForSleepers(1)
        }
        feed.withLock { $0 }?.yield(Data("def".utf8))
        feed.withLock { $0 }?.finish()
        let body = try await response.body.collect(upTo: 100)
        #expect(String(decoding: body, as: UTF8.self) == "abcdef")
    }

    @Test func uploadBytesTakenByTheTransportCountAsActivity() async throws {
        /// Reports one more upload byte each time the test ticks, until cancelled.
        struct Uploading: Transport {
            let ticks: AsyncStream<Void>
            func send(hop request: Request, options: StreamOptions) async throws -> StreamedResponse {
                var sent: Int64 = 0
                for await _ in ticks {
                    sent += 1
                    options.uploadProgress?.update(completed: sent, expected: 100)
                }
                throw CancellationError()
            }
        }
        let clock = ManualClock()
        let (ticks, tick) = AsyncStream<Void>.makeStream()
        let progress = TransferProgress()
        let exchange = Exchange(transport: Uploading(ticks: ticks), clock: clock)
        let request = Request.post |> url("https://api.test/upload") |> body(Data(count: 100)) |> timeout(5)
        let call = Task { try await exchange.stream(request, options: StreamOptions(uploadProgress: progress)) }
        try await clock.waitForSleepers(1)
        clock.advance(by: .seconds(4))
        tick.yield()
        for await snapshot in progress.updates where snapshot.completed == 1 { break }
        // 8 s after the start, 4 s after the upload moved: still waiting.
        clock.advance(by: .seconds(4))
        try await clock.waitForSleepers(1)
        #expect(progress.current.isFinished == false)
        clock.advance(by: .seconds(1))
        let error = await #expect(throws: CourierError.self) { _ = try await call.value }
        #expect(Self.timedOut(error))
        tick.finish()
    }

    @Test func aStreamedBodyPastTheLimitStopsTheTransferWithResponseTooLarge() async throws {
        let feed = Box<ByteStream.Continuation?>(nil)
        let stopped = Box(false)
        let exchange = Exchange(transport: Live(headers: [:], feed: feed), maximumResponseSize: 25)
        let response = try await exchange.stream(Self.request)
        let continuation = try #require(feed.withLock { $0 })
        continuation.onTermination { stopped.withLock { $0 = true } }
        #expect(continuation.yield(Data(count: 10)))
        #expect(continuation.yield(Data(count: 10)))
        // The third chunk passes 25 bytes: refused, and the transport told to stop, whoever reads.
        #expect(!continuation.yield(Data(count: 10)))
        #expect(stopped.withLock { $0 })
        let error = await #expect(throws: CourierError.self) { _ = try await response.body.collect(upTo: 1 << 20) }
        guard case .responseTooLarge(let limit)? = error?.cause else { Issue.record("\(String(describing: error))"); return }
        #expect(limit == 25)
        #expect(error?.request?.url?.path == "/rules")
    }

    @Test func aBodyInHandPastTheLimitFailsAndOneWithinItPasses() async throws {
        let stubs = InMemoryExecutor(routes: [
            .init(.get, "/big", .text(String(repeating: "x", count: 26))), .init(.get, "/small", .text("fits")),
        ], maximumResponseSize: 25)
        let exchange = stubs
        let error = await #expect(throws: CourierError.self) { _ = try await exchange.send(.get |> url("https://api.test/big")) }
        guard case .responseTooLarge(25)? = error?.cause else { Issue.record("\(String(describing: error))"); return }
        let small = try await exchange.send(.get |> url("https://api.test/small"))
        #expect(small.body == Data("fits".utf8))
    }

    @Test func aStreamThatEndsShortOfItsContentLengthFailsAsTruncated() async throws {
        let feed = Box<ByteStream.Continuation?>(nil)
        let exchange = Exchange(transport: Live(headers: ["Content-Length": "10"], feed: feed))
        let response = try await exchange.stream(Self.request)
        feed.withLock { $0 }?.yield(Data("12345".utf8))
        feed.withLock { $0 }?.finish()
        let error = await #expect(throws: CourierError.self) { _ = try await response.body.collect(upTo: 100) }
        guard case .transport(let failure)? = error?.cause else { Issue.record("\(String(describing: error))"); return }
        #expect(failure.kind == .truncatedBody)
        #expect(failure.message.contains("5 bytes") && failure.message.contains("announced 10"))
    }

    @Test func aStreamThatEndedShortBeforeTheHeadWasSeenStillFails() async throws {
        /// The whole (short) body arrives and ends before the exchange sees the head.
        struct Early: Transport {
            func send(hop request: Request, options: StreamOptions) async throws -> StreamedResponse {
                let (stream, continuation) = ByteStream.makeStream()
                continuation.yield(Data("123".utf8))
                continuation.finish()
                return StreamedResponse(status: 200, headers: ["Content-Length": "4"], body: stream)
            }
        }
        let error = await #expect(throws: CourierError.self) { _ = try await Exchange(transport: Early()).send(Self.request) }
        guard case .transport(let failure)? = error?.cause else { Issue.record("\(String(describing: error))"); return }
        #expect(failure.kind == .truncatedBody)
    }

    @Test(arguments: [
        // A body in hand one byte long.
        (HTTPMethod.get, 200, ["Content-Length": "5"], true),
        (.head, 200, ["Content-Length": "5"], false),
        (.get, 204, ["Content-Length": "5"], false),
        (.get, 304, ["Content-Length": "5"], false),
        (.get, 200, ["Content-Length": "5", "Content-Encoding": "gzip"], false),
        (.get, 200, ["Content-Length": "5", "Content-Encoding": " Identity "], true),
        (.get, 200, ["Content-Length": "1"], false),
        (.get, 200, ["Content-Length": "+1"], false),
    ])
    func theFramingRuleChecksOnlyWhatItCanCount(method: HTTPMethod, status: Int, headers: [String: String], fails: Bool) async throws {
        struct Canned: Transport {
            let status: Int
            let headers: HTTPHeaders
            func send(hop request: Request, options: StreamOptions) async throws -> StreamedResponse {
                StreamedResponse(status: status, headers: headers, body: ByteStream(Data("x".utf8)))
            }
        }
        var fields = HTTPHeaders()
        for (name, value) in headers { fields.add(HeaderName(rawValue: name), value) }
        let exchange = Exchange(transport: Canned(status: status, headers: fields), redirects: .refuse)
        let request = Request(method: method) |> url("https://api.test/framing")
        let outcome: Result<StreamedResponse, any Error> = await Result { try await exchange.execute(request, options: .buffered) }
        #expect((try? outcome.get()) == nil ? fails : !fails)
    }
}

extension Result where Failure == any Error {
    /// The outcome of an async throwing call.
    fileprivate init(_ body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
