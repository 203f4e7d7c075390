import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Streaming: reconnecting event source", .timeLimit(.minutes(1)))
struct EventSourceTests {
    let api = "https://api.example.com"

    /// A server that sends events after the request's Last-Event-ID, `perConnection` at a time,
    /// and 204 once all `count` are sent.
    static func server(count: Int, perConnection: Int, retry: Int? = nil) -> (@Sendable (Request) -> Stub, Box<[String?]>) {
        let seen = Box<[String?]>([])
        let handler: @Sendable (Request) -> Stub = { request in
            let last = request.headers[.lastEventID]
            seen.withLock { $0.append(last) }
            #expect(request.headers[.accept] == "text/event-stream")
            let start = (last.flatMap(Int.init) ?? 0) + 1
            guard start <= count else { return .status(204) }
            let ids = start...min(count, start + perConnection - 1)
            return .serverSentEvents(ids.map { ServerSentEvent(data: "event \($0)", id: "\($0)", retry: retry) })
        }
        return (handler, seen)
    }

    @Test func reconnectsWithLastEventIDAndStopsOn204() async throws {
        let (handler, seen) = Self.server(count: 5, perConnection: 2)
        let clock = ManualClock()
        let source = EventSource(
            .get |> url(api + "/events"), executor: InMemoryExecutor(handler: handler),
            policy: .init(initialDelay: .seconds(2)), clock: clock)
        let reader = Task {
            var data: [String] = []
            for try await event in source { data.append(event.data) }
            return data
        }
        // Each reconnection waits on the clock: drive it.
        for _ in 0..<3 {
            try await clock.waitForSleepers(1)
            clock.advance(by: .seconds(2))
        }
        let data = try await reader.value
        #expect(data == (1...5).map { "event \($0)" })
        let lastIDs: [String?] = seen.withLock { $0 }
        #expect(lastIDs == [nil, "2", "4", "5"])
    }

    @Test func usesTheServersRetryAndBacksOffWhenNothingArrives() {
        let policy = EventSource.ReconnectPolicy(initialDelay: .seconds(3), maximumDelay: .seconds(10))
        #expect(policy.delay(beforeAttempt: 1, serverRetry: nil) == .seconds(3))
        #expect(policy.delay(beforeAttempt: 1, serverRetry: 500) == .milliseconds(500))
        #expect(policy.delay(beforeAttempt: 2, serverRetry: 500) == .seconds(1))
        #expect(policy.delay(beforeAttempt: 3, serverRetry: nil) == .seconds(10))
        #expect(policy.delay(beforeAttempt: 1_000_000, serverRetry: Int.max) == .seconds(10))
    }

    @Test func aNon200StatusStops() async throws {
        let source = EventSource(.get |> url(api + "/events"), executor: InMemoryExecutor { _ in .status(500) })
        let error = await expectCourierError { for try await _ in source {} }
        guard case .unacceptableStatus(500, _) = error?.cause else {
            Issue.record("expected 500, got \(String(describing: error))")
            return
        }
    }

    @Test func theWrongContentTypeStops() async throws {
        let source = EventSource(.get |> url(api + "/events"), executor: InMemoryExecutor { _ in .text("data: x\n\n") })
        let error = await expectCourierError { for try await _ in source {} }
        guard case .unacceptableContentType = error?.cause else {
            Issue.record("expected unacceptableContentType, got \(String(describing: error))")
            return
        }
    }

    @Test func givesUpAfterTheMaximumAttemptsWithoutEvents() async throws {
        let executor = InMemoryExecutor { _ in .failure(URLError(.cannotConnectToHost)) }
        let source = EventSource(
            .get |> url(api + "/events"), executor: executor, policy: .init(initialDelay: .zero, maximumAttempts: 2))
        let error = await expectCourierError { for try await _ in source {} }
        guard case .transport(let failure) = error?.cause, failure.kind == .cannotConnect else {
            Issue.record("expected cannotConnect, got \(String(describing: error))")
            return
        }
        #expect(executor.requests.count == 3)
    }

    @Test func cancellationEndsTheSourceWhileItWaits() async throws {
        let (handler, _) = Self.server(count: 100, perConnection: 1)
        let clock = ManualClock()
        let source = EventSource(.get |> url(api + "/events"), executor: InMemoryExecutor(handler: handler), clock: clock)
        let reader = Task {
            var count = 0
            for try await _ in source { count += 1 }
            return count
        }
        try await clock.waitForSleepers(1)
        reader.cancel()
        let result = await reader.result
        guard case .failure(let error as CourierError) = result, case .cancelled = error.cause else {
            Issue.record("expected cancelled, got \(result)")
            return
        }
    }
}

@Suite("Streaming: downloads")
struct DownloadTests {
    let api = "https://files.example.com"

    static let content = Data((0..<10_000).map { UInt8($0 % 251) })

    /// Serves `content` with an ETag, honouring Range and If-Range unless `ignoresRange`; cuts the
    /// first answer after `cutAfter` bytes when given.
    static func fileServer(ignoresRange: Bool = false, cutAfter: Int? = nil, etag: String = "\"v1\"") -> (InMemoryExecutor, Box<[Request]>) {
        let seen = Box<[Request]>([])
        let cut = Box(cutAfter)
        let executor = InMemoryExecutor { request in
            seen.withLock { $0.append(request) }
            var start = 0
            var status = 200
            var headers: HTTPHeaders = [.eTag: etag, .contentType: "application/octet-stream"]
            if !ignoresRange, let range = request.headers[.range], request.headers[.ifRange] == etag,
                let from = Int(range.dropFirst("bytes=".count).dropLast())
            {
                start = from
                status = 206
                headers[.contentRange] = "bytes \(from)-\(content.count - 1)/\(content.count)"
            }
            let body = content[start...]
            headers[.contentLength] = "\(body.count)"
            let chunks = stride(from: body.startIndex, to: body.endIndex, by: 1000).map { body[$0..<min($0 + 1000, body.endIndex)] }
            let stub = Stub.stream(chunks.map { Data($0) }, status: status, headers: headers)
            if let limit = cut.withLock({ value in defer { value = nil }; return value }) {
                return stub.failing(afterBytes: limit)
            }
            return stub
        }
        return (executor, seen)
    }

    func destination() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("courier-dl-\(UUID().uuidString).bin")
    }

    func cleanUp(_ url: URL) {
        for suffix in ["", ".partial", ".partial.validator"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
    }

    @Test func downloadsToTheDestinationWithProgress() async throws {
        let (executor, _) = Self.fileServer()
        let file = destination()
        defer { cleanUp(file) }
        let progress = TransferProgress()
        let download = try await executor.download(.get |> url(api + "/f"), to: file, options: DownloadOptions(progress: progress))
        #expect(try Data(contentsOf: file) == Self.content)
        #expect(download.size == 10_000)
        #expect(download.resumedFrom == 0)
        #expect(progress.current == TransferProgress.Snapshot(completed: 10_000, expected: 10_000, isFinished: true))
        #expect(!FileManager.default.fileExists(atPath: file.path + ".partial"))
    }

    @Test func anInterruptedDownloadResumesWithRangeAndIfRange() async throws {
        let (executor, seen) = Self.fileServer(cutAfter: 3_500)
        let file = destination()
        defer { cleanUp(file) }
        _ = await expectCourierError { _ = try await executor.download(.get |> url(api + "/f"), to: file) }
        #expect(!FileManager.default.fileExists(atPath: file.path))
        let download = try await executor.download(.get |> url(api + "/f"), to: file)
        #expect(download.resumedFrom == 3_500)
        #expect(try Data(contentsOf: file) == Self.content)
        let second = try #require(seen.withLock { $0.last })
        #expect(second.headers[.range] == "bytes=3500-")
        #expect(second.headers[.ifRange] == "\"v1\"")
    }

    /// A weak ETag is no validator for `If-Range` (RFC 9110 §13.1.5), however it is written:
    /// `/` and a combining mark after it are one Character, so `W/\u{301}"v1"` did not start
    /// with the Character "/" and was sent as a strong one.
    @Test func aWeakETagIsNeverSentInIfRange() async throws {
        let (executor, seen) = Self.fileServer(cutAfter: 3_500, etag: "W/\u{301}\"v1\"")
        let file = destination()
        defer { cleanUp(file) }
        _ = await expectCourierError { _ = try await executor.download(.get |> url(api + "/f"), to: file) }
        let download = try await executor.download(.get |> url(api + "/f"), to: file)
        #expect(try Data(contentsOf: file) == Self.content)
        #expect(download.resumedFrom == 0)
        let second = try #require(seen.withLock { $0.last })
        #expect(second.headers[.ifRange] == nil)
    }

    @Test func aServerThatIgnoresRangeStartsOver() async throws {
        let (executor, _) = Self.fileServer(ignoresRange: true, cutAfter: 4_000)
        let file = destination()
        defer { cleanUp(file) }
        _ = await expectCourierError { _ = try await executor.download(.get |> url(api + "/f"), to: file) }
        let download = try await executor.download(.get |> url(api + "/f"), to: file)
        #expect(download.resumedFrom == 0)
        #expect(try Data(contentsOf: file) == Self.content)
    }

    @Test func aFailedVerificationLeavesNothingBehind() async throws {
        let (executor, _) = Self.fileServer()
        let file = destination()
        defer { cleanUp(file) }
        struct Mismatch: Error {}
        let options = DownloadOptions(verify: { _ in throw Mismatch() })
        let error = await expectCourierError { _ = try await executor.download(.get |> url(api + "/f"), to: file, options: options) }
        guard case .fileFailure(let message) = error?.cause else {
            Issue.record("expected fileFailure, got \(String(describing: error))")
            return
        }
        #expect(message.contains("verification"))
        #expect(!FileManager.default.fileExists(atPath: file.path))
        #expect(!FileManager.default.fileExists(atPath: file.path + ".partial"))
    }

    @Test func anErrorStatusIsThrownAndNothingIsWritten() async throws {
        let executor = InMemoryExecutor { _ in .status(404, body: Data("missing".utf8)) }
        let file = destination()
        defer { cleanUp(file) }
        let error = await expectCourierError { _ = try await executor.download(.get |> url(api + "/f"), to: file) }
        guard case .unacceptableStatus(404, _) = error?.cause else {
            Issue.record("expected 404, got \(String(describing: error))")
            return
        }
        #expect(error?.response?.body == Data("missing".utf8))
        #expect(!FileManager.default.fileExists(atPath: file.path))
    }

    @Test func theDestinationIsReplacedAtomically() async throws {
        let (executor, _) = Self.fileServer()
        let file = destination()
        defer { cleanUp(file) }
        try Data("old".utf8).write(to: file)
        _ = try await executor.download(.get |> url(api + "/f"), to: file)
        #expect(try Data(contentsOf: file) == Self.content)
    }
}
