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

/// Streaming responses over URLSession, against httpbin and the stream server.
@Suite("Integration: streaming")
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
        let headAfter = clock.now - start
        #expect(headAfter < .seconds(1.5))
        let body = try await response.body.collect(upTo: 100)
        #expect(body.count == 5)
        #expect(clock.now - start >= .seconds(1.5))
    }

    @Test func breakingOutStopsTheTransfer() async throws {
        let response = try await executor.stream(try StreamServer.request() |> path("bytes") |> query("size", 1 << 30))
        var seen = 0
        for try await chunk in response.body {
            seen += chunk.count
            if seen > 1 << 20 { break }
        }
        #expect(seen > 1 << 20)
        #expect(seen < 1 << 30)
    }

    /// FoundationNetworking cannot pause a transfer: what a slow reader has not taken goes to the
    /// spill file, and the reader still gets every byte, in order.
    @Test func aSlowReaderGetsEveryByteThroughTheSpillFile() async throws {
        let size = 24 << 20
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
            try StreamServer.request() |> path("bytes") |> query("size", 256 << 20),
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
}
