import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Streaming responses over URLSession, against httpbin and the stream server. Serialized, and
/// run by scripts/test apart from the other integration suites: these tests move tens of
/// megabytes over loopback, which on two cores would skew the timing checks elsewhere.
@Suite("Integration: streaming", .serialized)
struct StreamingTests {
    let executor = HTTPBin.executor()

    @Test func linesOfStreamN() async throws {
        let response = try await executor.stream(try HTTPBin.request() |> path("stream", 5))
        var ids: [Int] = []
        struct Line: Decodable { var id: Int }
        for try await line in response.body.ndjson(Line.self) { ids.append(line.id) }
        #expect(ids == [0, 1, 2, 3, 4])
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

    // MARK: Server-sent events

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

    @Test func httpbinRangeAndBytes() async throws {
        let file = destination()
        defer { cleanUp(file) }
        let download = try await executor.download(try HTTPBin.request() |> path("range", 5000), to: file)
        #expect(download.size == 5000)
        let response = try await executor.stream(try HTTPBin.request() |> path("bytes", 4096))
        #expect(try await response.body.collect(upTo: 1 << 20).count == 4096)
    }
}
