import Courier
import Foundation
import Testing

/// The one-requirement contract: an executor returns a head with its body in hand or still
/// arriving, and middleware handles both without buffering a stream.
@Suite("Transport contract")
struct TransportContractTests {
    /// A transport whose body the test feeds by hand, after the head has been returned; it
    /// records the options each hop got and whether the transfer was stopped.
    final class Manual: Transport {
        let continuations = Box<[ByteStream.Continuation]>([])
        let options = Box<[StreamOptions]>([])
        let stopped = Box(0)
        let status: Int

        init(status: Int = 200) { self.status = status }

        func send(hop request: Request, options: StreamOptions) async throws -> StreamedResponse {
            try request.validate()
            self.options.withLock { $0.append(options) }
            let (stream, continuation) = ByteStream.makeStream(bufferLimit: 1 << 20)
            let stopped = self.stopped
            continuation.onTermination { stopped.withLock { $0 += 1 } }
            continuations.withLock { $0.append(continuation) }
            return StreamedResponse(status: status, headers: ["Content-Type": "text/plain"], body: stream)
        }

        var last: ByteStream.Continuation? { continuations.withLock { $0.last } }
        /// An executor over this transport.
        var executor: Exchange { Exchange(transport: self) }
    }

    /// Every middleware Courier ships that can stand in one chain.
    static func everyMiddleware(events: Box<[LoggingMiddleware.Event]>, recorder: HARRecorder) -> [any Middleware] {
        [
            DefaultHeadersMiddleware(["X-Client": "tests"]),
            LoggingMiddleware(bodies: .on(maxBytes: 64)) { event in events.withLock { $0.append(event) } },
            recorder,
            RetryMiddleware(),
            ConcurrencyLimitMiddleware(limit: 2),
            DeduplicationMiddleware(),
            AuthRefreshMiddleware(origins: [api], credential: "token") { _ in "fresh" },
        ]
    }

    @Test(.timeLimit(.minutes(1)))
    func noShippedMiddlewareBuffersAStream() async throws {
        let base = Manual()
        let events = Box<[LoggingMiddleware.Event]>([])
        let recorder = HARRecorder()
        let executor = Exchange(transport: base, middleware: Self.everyMiddleware(events: events, recorder: recorder))
        // The head comes back while the body has not started: nothing in the chain waited for it.
        let response = try await executor.stream(Request.get |> baseURL(api) |> path("feed"))
        #expect(response.status == 200)
        #expect(response.body.bufferedData == nil)
        let continuation = try #require(base.last)
        var iterator = response.body.makeAsyncIterator()
        for index in 0..<3 {
            continuation.yield(Data("chunk \(index)\n".utf8))
            // Each chunk reaches the reader on its own, before the next one exists.
            #expect(try await iterator.next() == Data("chunk \(index)\n".utf8))
        }
        continuation.finish()
        #expect(try await iterator.next() == nil)
        let kinds: [LoggingMiddleware.Event.Kind] = events.withLock { $0.map(\.kind) }
        #expect(kinds == [.request, .response, .streamEnded])
        let ended = try #require(events.withLock { $0.last })
        #expect(ended.streamedBytes == 24)
        #expect(recorder.entries.count == 1)
        #expect(recorder.entries.first?.response.content.size == 24)
    }

    @Test func sendAsksForTheBodyWholeAndStreamDoesNot() async throws {
        let base = Manual()
        let sending = Task { try await base.executor.send(Request.get |> baseURL(api)) }
        await waitUntil { base.last != nil }
        base.last?.yield(Data("all".utf8))
        base.last?.finish()
        #expect(try await sending.value.body == Data("all".utf8))
        _ = try await base.executor.stream(Request.get |> baseURL(api))
        let asked: [Bool] = base.options.withLock { $0.map(\.buffersBody) }
        #expect(asked == [true, false])
    }

    @Test func aCustomTransportGetsEveryFormFromItsOneMethod() async throws {
        struct Canned: Transport {
            func send(hop request: Request, options: StreamOptions) async throws -> StreamedResponse {
                StreamedResponse(status: 200, headers: ["Content-Type": "application/json"], body: ByteStream(Data(#"{"id":1,"name":"Ada"}"#.utf8)))
            }
        }
        let resource = Request.get |> baseURL(api) |> path("me") |> decode(User.self)
        #expect(try await Exchange(transport: Canned()).send(resource) == User(id: 1, name: "Ada"))
        let streamed = try await Exchange(transport: Canned()).stream(resource.request)
        #expect(try await streamed.body.collect(upTo: 100) == Data(#"{"id":1,"name":"Ada"}"#.utf8))
        let completed = await withCheckedContinuation { (done: CheckedContinuation<Result<User, CourierError>, Never>) in
            Exchange(transport: Canned()).send(resource) { done.resume(returning: $0) }
        }
        #expect(try completed.get() == User(id: 1, name: "Ada"))
    }

    @Test func aBodyInHandCostsNoStreamAndReadsAgain() async throws {
        let body = ByteStream(Data("hello".utf8))
        #expect(body.bufferedData == Data("hello".utf8))
        #expect(try await body.collect(upTo: 5) == Data("hello".utf8))
        var chunks: [Data] = []
        for try await chunk in body { chunks.append(chunk) }
        #expect(chunks == [Data("hello".utf8)])
        await #expect(throws: CourierError.self) { _ = try await body.collect(upTo: 4) }
        var empty = ByteStream(Data()).makeAsyncIterator()
        #expect(try await empty.next() == nil)
    }

    @Test func observingReturnsANewStreamAndLeavesTheOriginalAlone() async throws {
        let seen = Box<[Data]>([])
        let ends = Box<[String]>([])
        let original = ByteStream(Data("abc".utf8))
        let observed = original.observing(
            chunk: { chunk in seen.withLock { $0.append(chunk) } },
            end: { ending in ends.withLock { $0.append("\(ending)") } })
        // The original is unchanged: still in hand, and reading it calls no observer.
        #expect(original.bufferedData == Data("abc".utf8))
        #expect(try await original.collect(upTo: 10) == Data("abc".utf8))
        #expect(seen.withLock { $0.isEmpty })
        // The observed one goes past its observer, even for a body in hand.
        #expect(observed.bufferedData == nil)
        #expect(try await observed.collect(upTo: 10) == Data("abc".utf8))
        #expect(seen.withLock { $0 } == [Data("abc".utf8)])
        #expect(ends.withLock { $0 } == ["complete"])
    }

    @Test func anObservedStreamStoppedByItsReaderEndsItsObserverOnceAsAbandoned() async throws {
        let ends = Box<[String]>([])
        let (stream, continuation) = ByteStream.makeStream()
        let stopped = Box(false)
        continuation.onTermination { stopped.withLock { $0 = true } }
        do {
            let observed = stream.observing(chunk: { _ in }, end: { ending in ends.withLock { $0.append("\(ending)") } })
            observed.cancel()
        }
        #expect(stopped.withLock { $0 })
        #expect(ends.withLock { $0 } == ["abandoned"])
    }

    /// Every way a body can end reaches its observer as what it is: read whole, left unread by
    /// the reader (a cancel, a break, a stream dropped unread), or failed (the transport, a
    /// limit, a parser, a cancelled task).
    @Test func observersTellAnAbandonedBodyFromAFailedOne() async throws {
        func ending(_ read: @Sendable (ByteStream) async throws -> Void, finish: Bool = true, fail: CourierError? = nil) async -> String {
            let ends = Box<[String]>([])
            let (stream, continuation) = ByteStream.makeStream()
            continuation.yield(Data("line one\nline two\n".utf8))
            if let fail { continuation.finish(throwing: fail) } else if finish { continuation.finish() }
            do {
                let observed = stream.observing(chunk: { _ in }, end: { ending in ends.withLock { $0.append("\(ending)") } })
                try? await read(observed)
            }
            return ends.withLock { $0 }.joined(separator: ", ")
        }
        #expect(await ending({ _ = try await $0.collect(upTo: 100) }) == "complete")
        #expect(await ending({ _ in }) == "abandoned")  // dropped unread
        #expect(await ending({ for try await _ in $0 { break } }, finish: false) == "abandoned")
        #expect(await ending({ $0.cancel() }) == "abandoned")
        #expect(await ending({ _ = try await $0.collect(upTo: 3) }) == "failed: the response body exceeded the limit of 3 bytes")
        #expect(await ending({ _ = try await $0.collect(upTo: 100) }, fail: CourierError(.timedOut)).hasPrefix("failed: "))
        #expect(await ending({ for try await _ in $0.ndjson([Int].self) {} }).hasPrefix("failed: "))
        #expect(
            await ending({ body in
                let reader = Task { _ = try await body.collect(upTo: 100) }
                reader.cancel()
                _ = await reader.result
            }, finish: false) == "failed: the request was cancelled")
    }

    @Test func aRetrySupersedingAStreamStopsItsTransfer() async throws {
        let base = Manual(status: 503)
        let policy = RetryPolicy(maxAttempts: 2, baseDelay: .milliseconds(1), maxDelay: .milliseconds(1))
        let executor = base.executor.with(RetryMiddleware(policy: policy))
        let response = try await executor.stream(Request.get |> baseURL(api))
        #expect(response.status == 503)
        // The first attempt's transfer was stopped when the second replaced it; the second runs.
        #expect(base.stopped.withLock { $0 } == 1)
        #expect(base.continuations.withLock { $0.count } == 2)
        #expect(base.last?.isClosed == false)
    }

    @Test func aConcurrencySlotIsFreeAtOnceForABodyInHandAndHeldForAStream() async throws {
        let limit = ConcurrencyLimitMiddleware(limit: 1)
        let inHand = InMemoryExecutor { _ in .text("ok") }.with(limit)
        _ = try await inHand.send(Request.get |> baseURL(api))
        #expect(limit.inFlight == 0)
        let base = Manual()
        let streaming = base.executor.with(limit)
        let response = try await streaming.stream(Request.get |> baseURL(api))
        #expect(limit.inFlight == 1)
        base.last?.finish()
        for try await _ in response.body {}
        #expect(limit.inFlight == 0)
    }

    @Test(.timeLimit(.minutes(1)))
    func deduplicationNeverSharesAStream() async throws {
        /// Holds every call until released, then answers with a live stream of its own.
        final class Held: Transport {
            let base = Manual()
            let waiting = Box<[CheckedContinuation<Void, Never>]>([])
            func send(hop request: Request, options: StreamOptions) async throws -> StreamedResponse {
                await withCheckedContinuation { continuation in waiting.withLock { $0.append(continuation) } }
                return try await base.send(hop: request, options: options)
            }
        }
        let held = Held()
        let deduplication = DeduplicationMiddleware()
        let executor = Exchange(transport: held).with(deduplication)
        let request = Request.get |> baseURL(api) |> path("feed")
        let leader = Task { try await executor.stream(request) }
        await waitUntil { held.waiting.withLock { !$0.isEmpty } }
        let followers = (0..<2).map { _ in Task { try await executor.stream(request) } }
        // Both followers join the leader's flight before it answers.
        await waitUntil { deduplication.waiting == 2 }
        while held.base.continuations.withLock({ $0.count }) < 3 {
            for waiter in held.waiting.withLock({ waiting in defer { waiting.removeAll() }; return waiting }) { waiter.resume() }
            try await Task.sleep(for: .milliseconds(1))
        }
        let responses = [try await leader.value] + [try await followers[0].value, try await followers[1].value]
        for (index, continuation) in held.base.continuations.withLock({ $0 }).enumerated() {
            continuation.yield(Data("\(index)".utf8))
            continuation.finish()
        }
        var bodies: [String] = []
        for response in responses { bodies.append(String(decoding: try await response.body.collect(upTo: 10), as: UTF8.self)) }
        #expect(bodies.sorted() == ["0", "1", "2"])
    }
}
