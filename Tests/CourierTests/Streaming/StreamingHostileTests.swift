import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Streaming: hostile input and printing")
struct StreamingHostileTests {
    let api = "https://api.example.com"

    @Test func printingAStreamedResponseShowsNoSecret() async throws {
        let executor = InMemoryExecutor { _ in
            .stream([Data("secret-body".utf8)], headers: [.setCookie: "session=s3cr3t", .contentType: "text/plain"])
        }
        let response = try await executor.stream(.get |> url("https://user:pw@api.example.com/x?token=t0k3n"))
        var dumped = ""
        dump(response, to: &dumped)
        for text in [response.description, String(reflecting: response), dumped, "\(response.body)"] {
            #expect(!text.contains("s3cr3t"))
            #expect(!text.contains("t0k3n"))
            #expect(!text.contains("secret-body"))
        }
    }

    @Test func printingAnEventOrEventSourceHidesTokens() {
        let event = ServerSentEvent(data: #"{"access_token":"abc123xyz","text":"hi"}"#)
        var dumped = ""
        dump(event, to: &dumped)
        #expect(!event.description.contains("abc123xyz"))
        #expect(!dumped.contains("abc123xyz"))
        let source = EventSource(
            .get |> url("https://api.example.com/events?api_key=k3y") |> bearer("b34r3r"), executor: InMemoryExecutor { _ in .status(204) })
        var shown = ""
        dump(source, to: &shown)
        for text in [source.description, shown] {
            #expect(!text.contains("k3y"))
            #expect(!text.contains("b34r3r"))
        }
    }

    @Test(arguments: [Int.min, -1, 0, 1, Int.max])
    func anyBufferLimitIsSafe(limit: Int) async throws {
        let executor = InMemoryExecutor { _ in .stream([Data(count: 10), Data(count: 10)]) }
        let response = try await executor.stream(.get |> url(api), options: StreamOptions(bufferLimit: limit, spillLimit: Int64(limit)))
        // Whatever the limits, a producer that can wait delivers every byte.
        #expect(try await response.body.collect(upTo: 100).count == 20)
        // And collect's own limit, however absurd, is a typed error, never a trap.
        let again = try await executor.stream(.get |> url(api))
        if limit < 20 {
            _ = await expectCourierError { _ = try await again.body.collect(upTo: limit) }
        } else {
            #expect(try await again.body.collect(upTo: limit).count == 20)
        }
    }

    @Test func absurdRetryAndDelaysDoNotTrap() {
        let policy = EventSource.ReconnectPolicy(initialDelay: .seconds(Int64.max), maximumDelay: .seconds(-5), maximumAttempts: -3)
        #expect(policy.delay(beforeAttempt: Int.max, serverRetry: Int.max) >= .zero)
        #expect(policy.delay(beforeAttempt: Int.min, serverRetry: nil) >= .zero)
        #expect(policy.maximumAttempts == 0)
    }

    @Test func aHugeRetryFieldIsCapped() throws {
        var parser = ServerSentEventParser()
        try parser.feed(Data("retry: 99999999999999999999999999999\n\n".utf8)) { _ in }
        #expect(parser.retry == Int.max)
        #expect(EventSource.ReconnectPolicy().delay(beforeAttempt: 1, serverRetry: parser.retry) <= .seconds(60))
    }

    @Test func aPartialAnswerToAPlainDownloadIsRefused() async throws {
        let executor = InMemoryExecutor { _ in
            .stream([Data("tail".utf8)], status: 206, headers: [.contentRange: "bytes 100-103/104"])
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID().uuidString).bin")
        defer { try? FileManager.default.removeItem(at: file) }
        let error = await expectCourierError { _ = try await executor.download(.get |> url(api), to: file) }
        guard case .transport(let failure) = error?.cause, failure.kind == .badResponse else {
            Issue.record("expected badResponse, got \(String(describing: error))")
            return
        }
        #expect(!FileManager.default.fileExists(atPath: file.path))
    }

    @Test func aDownloadToANonFileURLIsRefusedBeforeSending() async throws {
        let executor = InMemoryExecutor { _ in .status(200) }
        let error = await expectCourierError { _ = try await executor.download(.get |> url(api), to: URL(string: "https://x.example/f")!) }
        guard case .invalidRequest = error?.cause else {
            Issue.record("expected invalidRequest, got \(String(describing: error))")
            return
        }
        #expect(executor.requests.isEmpty)
    }

    @Test func aValidatorWithALineBreakIsNeverSent() async throws {
        let seen = Box<[Request]>([])
        let executor = InMemoryExecutor { request in
            seen.withLock { $0.append(request) }
            return .stream([Data("abc".utf8)], headers: [.contentLength: "3"])
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID().uuidString).bin")
        defer {
            for suffix in ["", ".partial", ".partial.validator"] { try? FileManager.default.removeItem(atPath: file.path + suffix) }
        }
        try Data("ab".utf8).write(to: URL(fileURLWithPath: file.path + ".partial"))
        try Data("\"v1\"\r\nX-Evil: 1".utf8).write(to: URL(fileURLWithPath: file.path + ".partial.validator"))
        _ = try await executor.download(.get |> url(api), to: file)
        let range: String? = seen.withLock { (requests: inout [Request]) -> String? in requests.first?.headers[.range] }
        #expect(range == nil)
        #expect(try Data(contentsOf: file) == Data("abc".utf8))
    }

    @Test func aLineSplitAtEveryByteIsStillOneLine() throws {
        let text = Data("αβγ\r\n😀\r\n".utf8)
        var splitter = LineSplitter()
        var out: [String] = []
        for byte in text { try splitter.feed(Data([byte])) { out.append($0) } }
        splitter.finish { out.append($0) }
        #expect(out == ["αβγ", "😀"])
    }
}

@Suite("Streaming: unbounded input is refused")
struct UnboundedInputTests {
    @Test func anEventThatNeverEndsIsAnErrorNotABuffer() throws {
        var parser = ServerSentEventParser(maximumEventSize: 1000)
        let line = Data(("data: " + String(repeating: "x", count: 100) + "\n").utf8)
        var thrown: (any Error)?
        do {
            for _ in 0..<100 { try parser.feed(line) { _ in Issue.record("no event expected") } }
        } catch {
            thrown = error
        }
        guard let error = thrown as? CourierError, case .decodingFailed(let failure) = error.cause else {
            Issue.record("expected decodingFailed, got \(String(describing: thrown))")
            return
        }
        #expect(failure.message.contains("1000 bytes"))
    }
}

@Suite("Streaming: downloads that cannot be written")
struct DownloadDestinationTests {
    @Test func aMissingDirectoryFailsBeforeAnythingIsSent() async throws {
        let executor = InMemoryExecutor { _ in .stream([Data("x".utf8)]) }
        let destination = URL(fileURLWithPath: "/nonexistent-\(UUID().uuidString)/file.bin")
        let error = await expectCourierError { _ = try await executor.download(.get |> url("https://files.example.com/f"), to: destination) }
        guard case .fileFailure(let message) = error?.cause else {
            Issue.record("expected fileFailure, got \(String(describing: error))")
            return
        }
        #expect(message.contains("does not exist"))
        #expect(executor.requests.isEmpty)
    }
}
