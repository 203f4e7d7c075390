import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The stream server scripts/test starts (scripts/stream_server.py).
enum StreamServer {
    static func url(sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        try #require(
            ProcessInfo.processInfo.environment["COURIER_STREAM_URL"],
            "COURIER_STREAM_URL is not set: run the integration tests with scripts/test, which starts the server",
            sourceLocation: sourceLocation)
    }

    static func request(_ method: Request = .get, sourceLocation: SourceLocation = #_sourceLocation) throws -> Request {
        method |> baseURL(try url(sourceLocation: sourceLocation))
    }

    /// Byte `i` of the server's `/file` bodies.
    static func expected(_ range: Range<Int>) -> Data { Data(range.map { UInt8($0 % 251) }) }
}

/// Streaming responses over URLSession, against httpbin and the stream server. Serialized, and
/// run by scripts/test apart from the other integration suites: these tests move tens of
/// megabytes over loopback, which on two cores would skew the timing checks elsewhere.
@Suite("Integration: streaming", .serialized)
struct StreamingTests {
    let executor = HTTPBin.executor()

    @Test func streamBytesArriveWhole() async throws {
        let response = try await executor.stream(try HTTPBin.request() |> path("stream-bytes", 100_000) |> query("seed", 7))
        #expect(response.status == 200)
        var total = 0
        var chunks = 0
        for try await chunk in response.body {
            total += chunk.count
            chunks += 1
        }
        #expect(total == 100_000)
        #expect(chunks >= 1)
    }

    @Test func linesOfStreamN() async throws {
        let response = try await executor.stream(try HTTPBin.request() |> path("stream", 5))
        var ids: [Int] = []
        struct Line: Decodable { var id: Int }
        for try await line in response.body.ndjson(Line.self) { ids.append(line.id) }
        #expect(ids == [0, 1, 2, 3, 4])
    }

    @Test func headArrivesBeforeADrippedBody() async throws {
        let clock = ContinuousClock()
        let start = clock.now
        // 5 bytes over 2 s, after the head.
        let response = try await executor.stream(
            try HTTPBin.request() |> path("drip") |> query("numbytes", 5) |> query("duration", 2) |> query("delay", 0))
        let headAt = clock.now
        let body = try await response.body.collect(upTo: 100)
        #expect(body.count == 5)
        // The head came while the body was still dripping (not at the end); absolute times vary
        // with the load on the test server, the gap does not.
        #expect(clock.now - headAt > .seconds(1.2))
        #expect(headAt - start < clock.now - start)
    }

    @Test func breakingOutStopsTheTransfer() async throws {
        let response = try await executor.stream(try StreamServer.request() |> path("bytes") |> query("size", 64 << 20))
        var seen = 0
        for try await chunk in response.body {
            seen += chunk.count
            if seen > 1 << 20 { break }
        }
        #expect(seen > 1 << 20)
        #expect(seen < 64 << 20)
    }

    /// FoundationNetworking cannot pause a transfer: what a slow reader has not taken goes to the
    /// spill file, and the reader still gets every byte, in order.
    @Test func aSlowReaderGetsEveryByteThroughTheSpillFile() async throws {
        let size = 12 << 20
        let response = try await executor.stream(
            try StreamServer.request() |> path("file") |> query("size", size), options: StreamOptions(bufferLimit: 256 << 10))
        var received = Data()
        var first = true
        for try await chunk in response.body {
            if first {
                // Let the network run far ahead of the reader.
                try await Task.sleep(for: .milliseconds(500))
                first = false
            }
            received.append(chunk)
        }
        #expect(received.count == size)
        #expect(received == StreamServer.expected(0..<size))
    }

    @Test func aReaderPastBothLimitsEndsTheStream() async throws {
        let response = try await executor.stream(
            try StreamServer.request() |> path("bytes") |> query("size", 64 << 20),
            options: StreamOptions(bufferLimit: 1 << 20, spillLimit: 4 << 20))
        let error = await expectCourierError {
            for try await _ in response.body { try await Task.sleep(for: .milliseconds(50)) }
        }
        guard case .slowConsumer(let limit) = error?.cause else {
            Issue.record("expected slowConsumer, got \(String(describing: error))")
            return
        }
        #expect(limit == 1 << 20)
    }

    @Test func cancellingTheReadingTaskStopsAtOnce() async throws {
        let response = try await executor.stream(
            try HTTPBin.request() |> path("drip") |> query("numbytes", 10) |> query("duration", 10) |> query("delay", 0))
        let reader = Task { try await response.body.collect(upTo: 100) }
        try await Task.sleep(for: .milliseconds(300))
        let clock = ContinuousClock()
        let start = clock.now
        reader.cancel()
        let result = await reader.result
        #expect(clock.now - start < .seconds(2))
        guard case .failure(let error as CourierError) = result, case .cancelled = error.cause else {
            Issue.record("expected cancelled, got \(result)")
            return
        }
    }

    @Test func aDeadlineEndsTheBody() async throws {
        let response = try await executor.stream(
            try HTTPBin.request() |> path("drip") |> query("numbytes", 10) |> query("duration", 10) |> query("delay", 0)
                |> deadline(1))
        let error = await expectCourierError { _ = try await response.body.collect(upTo: 100) }
        guard case .timedOut = error?.cause else {
            Issue.record("expected timedOut, got \(String(describing: error))")
            return
        }
    }

    @Test func redirectsAreFollowedWithoutLeakingCredentials() async throws {
        let second = try HTTPBin.secondURL()
        let response = try await executor.stream(
            try HTTPBin.request() |> path("redirect-to") |> query("url", second + "/headers") |> bearer("s3cret"))
        #expect(response.status == 200)
        let body = try await response.body.collect(upTo: 1 << 20)
        let text = String(decoding: body, as: UTF8.self)
        #expect(!text.contains("s3cret"))
        #expect(text.contains("Host"))
    }

    @Test func statusErrorsStreamTheirBody() async throws {
        let response = try await executor.stream(try HTTPBin.request() |> path("status", 418))
        #expect(response.status == 418)
        let error = await expectCourierError { _ = try await response.validated() }
        guard case .unacceptableStatus(418, _) = error?.cause else {
            Issue.record("expected 418, got \(String(describing: error))")
            return
        }
    }

    @Test func theSizeLimitAppliesToStreams() async throws {
        let limited = URLSessionExecutor(configuration: .ephemeral, maximumResponseSize: 10_000)
        let response = try await limited.stream(try HTTPBin.request() |> path("bytes", 50_000))
        let error = await expectCourierError { _ = try await response.body.collect(upTo: 1 << 20) }
        guard case .responseTooLarge(10_000) = error?.cause else {
            Issue.record("expected responseTooLarge, got \(String(describing: error))")
            return
        }
    }

    @Test func aTruncatedBodyFailsTheStream() async throws {
        let response = try await executor.stream(try StreamServer.request() |> path("file") |> query("size", 100_000) |> query("cut", 1000))
        let error = await expectCourierError { _ = try await response.body.collect(upTo: 1 << 20) }
        #expect(error?.isTransient == true)
    }

    @Test func challenged401IsHandedBack() async throws {
        let response = try await executor.stream(try HTTPBin.request() |> path("basic-auth", "u", "p"))
        #expect(response.status == 401)
        _ = try await response.body.collect(upTo: 1 << 20)
    }

    // MARK: Server-sent events

    @Test func eventSourceReconnectsWithLastEventIDCheckedAtTheServer() async throws {
        let key = UUID().uuidString
        let source = EventSource(
            try StreamServer.request() |> path("sse") |> query("key", key) |> query("count", 7) |> query("per_connection", 3)
                |> query("retry", 50),
            executor: executor)
        var ids: [String] = []
        for try await event in source {
            ids.append(event.id ?? "")
            #expect(event.data == "event \(event.id ?? "")")
        }
        let expected: [String] = ["1", "2", "3", "4", "5", "6", "7"]
        #expect(ids == expected)
        let log = try await executor.send(try StreamServer.request() |> path("log") |> query("key", key) |> decode([String?].self))
        // The last connection is answered 204: the client stops there.
        #expect(log == [nil, "3", "6", "7"])
    }

    @Test func eventSourceStopsOnANon200Status() async throws {
        let source = EventSource(try StreamServer.request() |> path("sse-status") |> query("code", 503), executor: executor)
        let error = await expectCourierError { for try await _ in source {} }
        guard case .unacceptableStatus(503, _) = error?.cause else {
            Issue.record("expected 503, got \(String(describing: error))")
            return
        }
    }

    @Test func eventSourceStopsOn204AndOnTheWrongContentType() async throws {
        var count = 0
        for try await _ in EventSource(try StreamServer.request() |> path("sse-status") |> query("code", 204), executor: executor) {
            count += 1
        }
        #expect(count == 0)
        let error = await expectCourierError {
            for try await _ in EventSource(try StreamServer.request() |> path("sse-wrong-type"), executor: executor) {}
        }
        guard case .unacceptableContentType = error?.cause else {
            Issue.record("expected unacceptableContentType, got \(String(describing: error))")
            return
        }
    }

    @Test func ndjsonFromTheStreamServer() async throws {
        struct Line: Decodable, Sendable { var n: Int }
        let response = try await executor.stream(try StreamServer.request() |> path("ndjson") |> query("count", 50))
        var numbers: [Int] = []
        for try await line in response.body.ndjson(Line.self) { numbers.append(line.n) }
        #expect(numbers == Array(1...50))
    }

    // MARK: Downloads

    private func destination() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("courier-it-\(UUID().uuidString).bin")
    }

    private func cleanUp(_ url: URL) {
        for suffix in ["", ".partial", ".partial.validator"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
    }

    @Test func downloadResumesWithRangeAfterACut() async throws {
        let file = destination()
        defer { cleanUp(file) }
        let size = 3_000_000
        let cut = try StreamServer.request() |> path("file") |> query("size", size) |> query("cut", 1_234_567)
        _ = await expectCourierError { _ = try await executor.download(cut, to: file) }
        let partial = try FileManager.default.attributesOfItem(atPath: file.path + ".partial")[.size] as? NSNumber
        #expect(partial?.intValue == 1_234_567)
        let progress = TransferProgress()
        let download = try await executor.download(
            try StreamServer.request() |> path("file") |> query("size", size), to: file, options: DownloadOptions(progress: progress))
        #expect(download.resumedFrom == 1_234_567)
        #expect(download.response.status == 206)
        #expect(try Data(contentsOf: file) == StreamServer.expected(0..<size))
        #expect(progress.current == TransferProgress.Snapshot(completed: Int64(size), expected: Int64(size), isFinished: true))
    }

    @Test func downloadStartsOverWhenTheServerIgnoresRange() async throws {
        let file = destination()
        defer { cleanUp(file) }
        let request = try StreamServer.request() |> path("file") |> query("size", 500_000) |> query("ignore_range", 1)
        _ = await expectCourierError { _ = try await executor.download(request |> query("cut", 100_000), to: file) }
        let download = try await executor.download(request, to: file)
        #expect(download.resumedFrom == 0)
        #expect(try Data(contentsOf: file) == StreamServer.expected(0..<500_000))
    }

    @Test func downloadStartsOverWhenTheFileChanged() async throws {
        let file = destination()
        defer { cleanUp(file) }
        let base = try StreamServer.request() |> path("file") |> query("size", 400_000)
        _ = await expectCourierError { _ = try await executor.download(base |> query("etag", "v1") |> query("cut", 100_000), to: file) }
        let download = try await executor.download(base |> query("etag", "v2"), to: file)
        #expect(download.resumedFrom == 0)
        #expect(download.response.status == 200)
        #expect(try Data(contentsOf: file) == StreamServer.expected(0..<400_000))
    }

    @Test func httpbinRangeAndBytes() async throws {
        let file = destination()
        defer { cleanUp(file) }
        let download = try await executor.download(try HTTPBin.request() |> path("range", 5000), to: file)
        #expect(download.size == 5000)
        let response = try await executor.stream(try HTTPBin.request() |> path("bytes", 4096))
        #expect(try await response.body.collect(upTo: 1 << 20).count == 4096)
    }

    // MARK: Uploads

    @Test func uploadsAFileFromDiskWithProgress() async throws {
        let file = destination()
        defer { cleanUp(file) }
        let size = 5_000_000
        try StreamServer.expected(0..<size).write(to: file)
        let progress = TransferProgress()
        let response = try await executor.stream(
            try StreamServer.request(.post) |> path("upload") |> upload(file), options: StreamOptions(uploadProgress: progress))
        struct Received: Decodable { var length: Int; var crc32: UInt32; var content_type: String? }
        let received = try JSONDecoder().decode(Received.self, from: try await response.body.collect(upTo: 1 << 20))
        #expect(received.length == size)
        #expect(received.content_type == "application/octet-stream")
        #expect(progress.current.completed == Int64(size))
        #expect(progress.current.isFinished)
        // The same through send, which buffers only the (small) response.
        let again = try await executor.send(try StreamServer.request(.put) |> path("upload") |> upload(file) |> decode(Received.self))
        #expect(again.length == size)
        #expect(again.crc32 == received.crc32)
    }

    @Test func uploadsASequenceAndAMultipartFile() async throws {
        struct Received: Decodable { var length: Int }
        let chunks = AsyncStream<Data> { continuation in
            for _ in 0..<10 { continuation.yield(Data(repeating: 0x41, count: 100_000)) }
            continuation.finish()
        }
        let sequence = try await executor.send(
            try StreamServer.request(.post) |> path("upload") |> upload(chunks, length: 1_000_000) |> decode(Received.self))
        #expect(sequence.length == 1_000_000)

        let file = destination()
        defer { cleanUp(file) }
        try Data("hello from disk".utf8).write(to: file)
        let echo = try await executor.send(
            try HTTPBin.request(.post) |> path("anything") |> multipart([.field("title", "x"), .file("doc", at: file, contentType: .plainText)])
                |> decode(Echo.self))
        #expect(echo.form["title"] == .one("x"))
        #expect(echo.method == "POST")
    }

    @Test func aFileUploadSurvivesA307Redirect() async throws {
        let file = destination()
        defer { cleanUp(file) }
        try Data(repeating: 0x42, count: 70_000).write(to: file)
        let second = try HTTPBin.url()
        let response = try await executor.send(
            try HTTPBin.request(.post) |> path("redirect-to") |> query("url", second + "/anything") |> query("status_code", 307)
                |> upload(file) |> decode(Echo.self))
        #expect(response.data.count == 70_000)
    }

    @Test func aSequenceIsSentWhileItIsProducedWithoutALength() async throws {
        struct Received: Decodable { var length: Int; var crc32: UInt32 }
        let produced = Box(0)
        let chunks = AsyncStream<Data> { continuation in
            Task {
                for _ in 0..<20 {
                    try? await Task.sleep(for: .milliseconds(20))
                    produced.withLock { $0 += 1 }
                    continuation.yield(Data(repeating: 0x43, count: 50_000))
                }
                continuation.finish()
            }
        }
        let received = try await executor.send(
            try StreamServer.request(.post) |> path("upload") |> upload(chunks) |> decode(Received.self))
        #expect(received.length == 1_000_000)
        #expect(produced.withLock { $0 } == 20)
    }

    @Test func aStalledSequenceUploadIsCancelledAtOnce() async throws {
        let never = AsyncStream<Data> { continuation in
            continuation.yield(Data("start".utf8))  // then nothing, ever
        }
        let sending = Task { try await executor.send(try StreamServer.request(.post) |> path("upload") |> upload(never)) }
        try await Task.sleep(for: .milliseconds(300))
        let clock = ContinuousClock()
        let start = clock.now
        sending.cancel()
        let result = await sending.result
        #expect(clock.now - start < .seconds(2))
        guard case .failure(let error as CourierError) = result, case .cancelled = error.cause else {
            Issue.record("expected cancelled, got \(result)")
            return
        }
    }

    @Test func aSequenceThatBreaksItsDeclaredLengthFails() async throws {
        let short = AsyncStream<Data> { continuation in
            continuation.yield(Data(repeating: 1, count: 10))
            continuation.finish()
        }
        _ = await expectCourierError {
            _ = try await executor.send(try StreamServer.request(.post) |> path("upload") |> upload(short, length: 100))
        }
    }

    @Test func a307CannotReplayASequenceBody() async throws {
        let chunks = AsyncStream<Data> { continuation in
            continuation.yield(Data("abc".utf8))
            continuation.finish()
        }
        let error = await expectCourierError {
            _ = try await executor.send(
                try HTTPBin.request(.post) |> path("redirect-to") |> query("url", "/anything") |> query("status_code", 307)
                    |> upload(chunks))
        }
        guard case .transport(let failure) = error?.cause, failure.kind == .redirectFailed else {
            Issue.record("expected redirectFailed, got \(String(describing: error))")
            return
        }
        #expect(failure.message.contains("one-shot"))
    }
}
