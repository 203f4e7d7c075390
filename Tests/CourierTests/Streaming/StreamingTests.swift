import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Streaming: byte streams, in-memory streams and middleware")
struct ByteStreamTests {
    let api = "https://api.example.com"

    @Test func aProducerThatCanWaitIsHeldBackByAFullBuffer() async throws {
        let (stream, continuation) = ByteStream.makeStream(bufferLimit: 100)
        let sent = Box(0)
        let producer = Task {
            for _ in 0..<20 {
                guard await continuation.send(Data(repeating: 1, count: 40)) else { return }
                sent.withLock { $0 += 40 }
            }
            continuation.finish()
        }
        try await Task.sleep(for: .milliseconds(100))
        // Nothing read yet: at most the limit (plus the chunk that tipped it) is buffered.
        #expect(sent.withLock { $0 } <= 120)
        var total = 0
        for try await chunk in stream { total += chunk.count }
        await producer.value
        #expect(total == 800)
    }

    @Test func aProducerThatCannotWaitEndsTheStreamWhenNoSpillIsAllowed() async throws {
        let (stream, continuation) = ByteStream.makeStream(bufferLimit: 100)
        #expect(continuation.yield(Data(repeating: 1, count: 60)))
        #expect(continuation.yield(Data(repeating: 1, count: 30)))
        #expect(!continuation.yield(Data(repeating: 1, count: 30)))
        let error = await expectCourierError { for try await _ in stream {} }
        guard case .slowConsumer(100) = error?.cause else {
            Issue.record("expected slowConsumer, got \(String(describing: error))")
            return
        }
    }

    @Test func breakingOutOfTheLoopStopsTheProducer() async throws {
        let (stream, continuation) = ByteStream.makeStream(bufferLimit: 1 << 20)
        let stopped = Box(false)
        continuation.onTermination { stopped.withLock { $0 = true } }
        continuation.yield(Data("a".utf8))
        continuation.yield(Data("b".utf8))
        for try await _ in stream { break }
        #expect(stopped.withLock { $0 })
        #expect(!continuation.yield(Data("c".utf8)))
    }

    @Test func droppingAStreamUnreadStopsTheProducer() async throws {
        let stopped = Box(false)
        do {
            let (_, continuation) = ByteStream.makeStream()
            continuation.onTermination { stopped.withLock { $0 = true } }
        }
        #expect(stopped.withLock { $0 })
    }

    @Test func cancellingTheReaderStopsTheProducerAndThrowsCancelled() async throws {
        let (stream, continuation) = ByteStream.makeStream()
        let stopped = Box(false)
        continuation.onTermination { stopped.withLock { $0 = true } }
        let reader = Task { try await stream.collect(upTo: 100) }
        try await Task.sleep(for: .milliseconds(50))
        reader.cancel()
        let result = await reader.result
        guard case .failure(let error as CourierError) = result, case .cancelled = error.cause else {
            Issue.record("expected cancelled, got \(result)")
            return
        }
        #expect(stopped.withLock { $0 })
    }

    @Test func aFailureComesAfterTheBytesBeforeIt() async throws {
        let (stream, continuation) = ByteStream.makeStream()
        continuation.yield(Data("abc".utf8))
        continuation.finish(throwing: URLError(.networkConnectionLost))
        var received = Data()
        let error = await expectCourierError { for try await chunk in stream { received.append(chunk) } }
        #expect(received == Data("abc".utf8))
        #expect(error?.isTransient == true)
    }

    @Test func collectRefusesMoreThanItsLimit() async throws {
        let error = await expectCourierError { _ = try await ByteStream(chunks: [Data(count: 60), Data(count: 60)]).collect(upTo: 100) }
        guard case .responseTooLarge(100) = error?.cause else {
            Issue.record("expected responseTooLarge, got \(String(describing: error))")
            return
        }
    }

    // MARK: In-memory streams

    @Test func inMemoryStreamsDeliverChunksThenTheirFault() async throws {
        let executor = InMemoryExecutor(routes: [
            .init(.get, "/feed", Stub.stream([Data("one\n".utf8), Data("two\nthr".utf8), Data("ee\n".utf8)]).failing(afterBytes: 9))
        ])
        let response = try await executor.stream(.get |> url(api + "/feed"))
        #expect(response.status == 200)
        var lines: [String] = []
        let error = await expectCourierError { for try await line in response.body.lines { lines.append(line) } }
        #expect(lines == ["one", "two"])
        guard case .transport(let failure) = error?.cause, failure.kind == .connectionLost else {
            Issue.record("expected a lost connection, got \(String(describing: error))")
            return
        }
    }

    @Test func buffersTheSameStubForSend() async throws {
        let executor = InMemoryExecutor(routes: [.init(.get, "/feed", .ndjson([User(id: 1, name: "Ada"), User(id: 2, name: "Lin")]))])
        let response = try await executor.send(.get |> url(api + "/feed"))
        let lines = response.body.split(separator: 0x0A).map { try? JSONDecoder().decode(User.self, from: Data($0)) }
        #expect(lines == [User(id: 1, name: "Ada"), User(id: 2, name: "Lin")])
        let streamed = try await executor.stream(.get |> url(api + "/feed"))
        var users: [User] = []
        for try await user in streamed.body.ndjson(User.self) { users.append(user) }
        #expect(users.map(\.id) == [1, 2])
    }

    @Test func ndjsonNamesTheLineThatFailsToDecode() async throws {
        let body = ByteStream(chunks: [Data("{\"id\":1,\"name\":\"a\"}\n\n{\"id\":\"two\"}\n".utf8)])
        var users: [User] = []
        let error = await expectCourierError { for try await user in body.ndjson(User.self) { users.append(user) } }
        #expect(users.count == 1)
        guard case .decodingFailed(let failure) = error?.cause else {
            Issue.record("expected decodingFailed, got \(String(describing: error))")
            return
        }
        #expect(failure.message.hasPrefix("line 3:"))
    }

    @Test func aTerminatorEndsTheEventsAndStopsTheTransfer() async throws {
        let executor = InMemoryExecutor(routes: [
            .init(
                .post, "/chat",
                .serverSentEvents([
                    ServerSentEvent(data: #"{"delta":"Hel"}"#), ServerSentEvent(data: #"{"delta":"lo"}"#),
                    ServerSentEvent(data: "[DONE]"), ServerSentEvent(data: "never seen"),
                ]))
        ])
        struct Chunk: Decodable, Sendable { var delta: String }
        let response = try await executor.stream(.post |> url(api + "/chat"))
        #expect(response.contentType?.essence == "text/event-stream")
        var text = ""
        for try await chunk in response.body.serverSentEvents(until: { $0.data == "[DONE]" }).decode(Chunk.self) {
            text += chunk.delta
        }
        #expect(text == "Hello")
    }

    @Test func aDeadlineEndsAStreamMidBody() async throws {
        let executor = InMemoryExecutor(routes: [
            .init(.get, "/slow", .stream(Array(repeating: Data("x".utf8), count: 50), every: .milliseconds(100)))
        ])
        let response = try await executor.stream(.get |> url(api + "/slow") |> deadline(0.3))
        // The outcome is the proof, not a stopwatch: without the deadline the body ends normally
        // after 5 s; with it, reading fails with timedOut.
        let error = await expectCourierError { _ = try await response.body.collect(upTo: 1000) }
        guard case .timedOut = error?.cause else {
            Issue.record("expected timedOut, got \(String(describing: error))")
            return
        }
    }

    @Test func anInvalidRequestIsNeverStreamed() async throws {
        let executor = InMemoryExecutor { _ in .status(200) }
        let error = await expectCourierError { _ = try await executor.stream(.get |> url("https://exa mple.com")) }
        guard case .invalidRequest = error?.cause else {
            Issue.record("expected invalidRequest, got \(String(describing: error))")
            return
        }
        #expect(executor.requests.isEmpty)
    }

    // MARK: Middleware

    @Test func retriesHappenBeforeTheFirstBodyByte() async throws {
        let executor = InMemoryExecutor.scripted([.status(503), .status(503)], then: .stream([Data("ok".utf8)]))
            .with(RetryMiddleware(policy: RetryPolicy(maxAttempts: 3, baseDelay: .zero)))
        let response = try await executor.stream(.get |> url(api + "/x"))
        #expect(response.status == 200)
        #expect(try await response.body.collect(upTo: 10) == Data("ok".utf8))
    }

    @Test func aFailureMidBodyIsNotRetried() async throws {
        let inner = InMemoryExecutor { _ in Stub.stream([Data("partial".utf8)]).failing(afterBytes: 3) }
        let executor = inner.with(RetryMiddleware(policy: RetryPolicy(maxAttempts: 3, baseDelay: .zero)))
        let response = try await executor.stream(.get |> url(api + "/x"))
        _ = await expectCourierError { _ = try await response.body.collect(upTo: 100) }
        #expect(inner.requests.count == 1)
    }

    @Test func requestMiddlewareAppliesToStreams() async throws {
        let inner = InMemoryExecutor { request in .stream([Data((request.headers["X-Tenant"] ?? "none").utf8)]) }
        let executor = inner.with(DefaultHeadersMiddleware(["X-Tenant": "acme"]))
        let response = try await executor.stream(.get |> url(api + "/x"))
        #expect(try await response.body.collect(upTo: 10) == Data("acme".utf8))
    }

    @Test func loggingReportsTheEndOfAStreamWithItsSizeAndNoSecrets() async throws {
        let events = Box<[LoggingMiddleware.Event]>([])
        let executor = InMemoryExecutor { _ in .stream([Data("token=abc123\n".utf8), Data("more".utf8)]) }
            .with(LoggingMiddleware(bodies: .on(maxBytes: 100)) { event in events.withLock { $0.append(event) } })
        let response = try await executor.stream(.get |> url(api + "/x") |> bearer("abc123"))
        _ = try await response.body.collect(upTo: 100)
        let logged = events.withLock { $0 }
        let kinds: [LoggingMiddleware.Event.Kind] = logged.map(\.kind)
        #expect(kinds == [.request, .response, .streamEnded])
        #expect(logged.last?.streamedBytes == 17)
        #expect(logged.last?.description.contains("17 bytes streamed") == true)
        #expect(!logged.contains { $0.description.contains("abc123") || ($0.responseBody ?? "").contains("abc123") })
    }

    @Test func theConcurrencyLimitHoldsItsSlotUntilTheStreamEnds() async throws {
        let limit = ConcurrencyLimitMiddleware(limit: 1)
        let executor = InMemoryExecutor { _ in .stream([Data("a".utf8)]) }.with(limit)
        let first = try await executor.stream(.get |> url(api + "/x"))
        #expect(limit.inFlight == 1)
        _ = try await first.body.collect(upTo: 10)
        #expect(limit.inFlight == 0)
        do {
            let dropped = try await executor.stream(.get |> url(api + "/y"))
            #expect(limit.inFlight == 1)
            _ = dropped.status
        }
        #expect(limit.inFlight == 0)
    }

    @Test func recordedStreamsReplayChunkByChunk() async throws {
        let recorder = HARRecorder()
        let live = InMemoryExecutor { _ in .serverSentEvents([ServerSentEvent(data: "one"), ServerSentEvent(data: "two")]) }
        let response = try await live.with(recorder).stream(.get |> url(api + "/events"))
        var seen: [String] = []
        for try await event in response.body.serverSentEvents { seen.append(event.data) }
        #expect(seen == ["one", "two"])
        let har = recorder.har
        #expect(har.log.entries.first?.response.content._chunks == [11, 11])

        let data = try JSONEncoder().encode(har)
        let replay = HARReplayExecutor(try JSONDecoder().decode(HAR.self, from: data))
        let replayed = try await replay.stream(.get |> url(api + "/events"))
        var chunks: [Data] = []
        for try await chunk in replayed.body { chunks.append(chunk) }
        #expect(chunks.map(\.count) == [11, 11])
        #expect(replayed.contentType?.essence == "text/event-stream")
    }

    // MARK: Uploads

    @Test func aOneShotSequenceBodyIsNotRetriedAndSaysWhyWhenResent() async throws {
        let source = BodySource.sequence(AsyncStream<Data> { continuation in
            continuation.yield(Data("abc".utf8))
            continuation.finish()
        })
        #expect(!source.isRepeatable)
        var request = Request.post |> url(api + "/up")
        request.bodySource = source
        #expect(!request.isRetryable)
        #expect(try await source.collect(upTo: 10) == Data("abc".utf8))
        let error = await expectCourierError { _ = try await source.collect(upTo: 10) }
        #expect(error?.summary.contains("already sent") == true)
    }

    @Test func aFileBodyRendersAsAChunkedBodyStream() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID().uuidString).bin")
        try Data(repeating: 7, count: 1000).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let request = .put |> url(api + "/up") |> upload(file)
        let rendered = try request.urlRequest()
        #expect(rendered.httpBody == nil)
        #expect(rendered.httpBodyStream != nil)
        // A body stream is sent chunked: a Content-Length beside it would frame it twice.
        #expect(rendered.value(forHTTPHeaderField: "Content-Length") == nil)
        #expect(try (request |> header(.contentLength, "1000")).urlRequest().value(forHTTPHeaderField: "Content-Length") == nil)
        #expect(request.description.contains("file \(file.lastPathComponent)"))
        // A data body replaces it, and the other way round.
        #expect((request |> body(Data("x".utf8))).bodySource == nil)
        #expect(((.post |> body(Data("x".utf8))) |> upload(file)).body == nil)
    }

    @Test func aContentLengthThatDisagreesWithTheFileIsRefused() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID().uuidString).bin")
        try Data(repeating: 7, count: 10).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let request = .put |> url(api + "/up") |> upload(file) |> header(.contentLength, "5")
        #expect(request.problems.map(\.kind) == [.invalidFraming])
    }

    @Test func aSequenceBodyCannotBeRenderedIntoAURLRequest() {
        let request = .post |> url(api + "/up") |> upload(AsyncStream<Data> { $0.finish() })
        #expect(throws: CourierError.self) { try request.urlRequest() }
    }
}

@Suite("Streaming: progress")
struct TransferProgressTests {
    @Test func aLateReaderSeesTheFinalState() async {
        let progress = TransferProgress()
        progress.update(completed: 10, expected: 100)
        progress.update(completed: 100)
        progress.finish()
        var seen: [TransferProgress.Snapshot] = []
        for await snapshot in progress.updates { seen.append(snapshot) }
        #expect(seen == [TransferProgress.Snapshot(completed: 100, expected: 100, isFinished: true)])
        #expect(seen.last?.fractionCompleted == 1)
    }

    @Test func anEarlyReaderSeesChangesInOrderAndTheEnd() async throws {
        let progress = TransferProgress()
        let reader = Task {
            var seen: [Int64] = []
            for await snapshot in progress.updates { seen.append(snapshot.completed) }
            return seen
        }
        try await Task.sleep(for: .milliseconds(20))
        for step in 1...5 {
            progress.update(completed: Int64(step * 10), expected: 50)
            try await Task.sleep(for: .milliseconds(5))
        }
        progress.finish()
        let seen = await reader.value
        #expect(seen.last == 50)
        #expect(seen == seen.sorted())
    }
}

@Suite("Streaming: retries, refresh and repeatable bodies")
struct StreamingMiddlewareTests {
    @Test func aStreamRefreshesItsTokenOnA401BeforeTheBody() async throws {
        let inner = InMemoryExecutor { request in
            request.headers[.authorization] == "Bearer new" ? .stream([Data("secret feed".utf8)]) : .status(401)
        }
        let auth = AuthRefreshMiddleware(origins: ["https://api.test"], credential: "old") { _ in "new" }
        let response = try await inner.with(auth).stream(.get |> url("https://api.test/feed"))
        #expect(response.status == 200)
        #expect(try await response.body.collect(upTo: 100) == Data("secret feed".utf8))
        #expect(inner.requests.map { $0.headers[.authorization] } == ["Bearer old", "Bearer new"])
    }

    @Test func aRetriedFileUploadReadsTheFileAgain() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID().uuidString).bin")
        try Data("the whole file".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let bodies = Box<[Data]>([])
        let attempts = Box(0)
        let inner = InMemoryExecutor { request in
            let body = try await request.bodySource?.collect(upTo: 1000) ?? Data()
            bodies.withLock { $0.append(body) }
            return attempts.withLock { count in
                count += 1
                return count == 1 ? Stub.status(503) : Stub.status(201)
            }
        }
        let executor = inner.with(RetryMiddleware(policy: RetryPolicy(maxAttempts: 3, baseDelay: .zero)))
        let response = try await executor.send(.put |> url("https://api.test/upload") |> upload(file))
        #expect(response.status == 201)
        #expect(bodies.withLock { $0 } == [Data("the whole file".utf8), Data("the whole file".utf8)])
    }

    @Test func aSequenceUploadIsNotRetried() async throws {
        let inner = InMemoryExecutor.scripted([.status(503)], then: .status(201))
        let executor = inner.with(RetryMiddleware(policy: RetryPolicy(maxAttempts: 3, baseDelay: .zero)))
        let chunks = AsyncStream<Data> { continuation in
            continuation.yield(Data("once".utf8))
            continuation.finish()
        }
        let response = try await executor.send(.put |> url("https://api.test/upload") |> upload(chunks))
        #expect(response.status == 503)
        #expect(inner.requests.count == 1)
    }
}
