import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Many transfers at once on two Swift concurrency threads: nothing the URLSession executor does
/// may block one of them (a `resume()`, a body pipe's read, a semaphore), or transfers that need a
/// thread to make progress wait for ones that hold it, for ever. Each test passes when every
/// transfer finishes whole; a deadlock meets the test's time limit (two minutes, for transfers
/// that take a second or two), which is there to end a hang, not to measure speed.
@Suite("Integration: concurrency", .serialized)
struct ConcurrencyTests {
    struct Received: Decodable { var length: Int }

    static let count = 64

    /// `count` chunks of `size` bytes, one every `interval`, produced by a task of their own.
    static func chunks(_ count: Int, of size: Int, every interval: Duration) -> AsyncStream<Data> {
        AsyncStream { continuation in
            Task {
                for _ in 0..<count {
                    try? await Task.sleep(for: interval)
                    continuation.yield(Data(repeating: 0x41, count: size))
                }
                continuation.finish()
            }
        }
    }

    /// Runs `count` copies of `body` at once and returns how long they all took.
    func together(_ body: @escaping @Sendable (Int) async throws -> Void) async throws -> Duration {
        let clock = ContinuousClock()
        let start = clock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<Self.count { group.addTask { try await body(index) } }
            try await group.waitForAll()
        }
        return start.duration(to: clock.now)
    }

    @Test(.timeLimit(.minutes(2)))
    func manySequenceUploadsAtOnceAllFinish() async throws {
        let executor = URLSessionExecutor(configuration: .ephemeral)
        let request = try StreamServer.request(.post) |> path("upload") |> timeout(60)
        _ = try await together { _ in
            let chunks = Self.chunks(8, of: 16_384, every: .milliseconds(5))
            let received = try await executor.send(request |> upload(chunks) |> decode(Received.self))
            #expect(received.length == 8 * 16_384)
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func manyFileUploadsAtOnceAllFinish() async throws {
        let executor = URLSessionExecutor(configuration: .ephemeral)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-concurrent-\(UUID().uuidString)")
        try Data(repeating: 0x42, count: 200_000).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let request = try StreamServer.request(.post) |> path("upload") |> timeout(60)
        _ = try await together { _ in
            let received = try await executor.send(request |> upload(file) |> decode(Received.self))
            #expect(received.length == 200_000)
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func manyStreamsAtOnceAllFinish() async throws {
        let executor = URLSessionExecutor(configuration: .ephemeral)
        let request = try StreamServer.request() |> path("bytes") |> query("size", 1 << 20) |> timeout(60)
        _ = try await together { _ in
            let response = try await executor.stream(request)
            var total = 0
            for try await chunk in response.body { total += chunk.count }
            #expect(total == 1 << 20)
        }
    }

    /// Buffered calls made from many tasks at once, beside uploads whose producers pause: a call
    /// that made and resumed its URLSession task on the caller's thread waited there for
    /// FoundationNetworking's work queue, which libcurl's read of a body pipe holds until a
    /// producer writes; with both concurrency threads waiting so, no producer could run, and
    /// nothing ever finished (found running the whole suite on two cores).
    @Test(.timeLimit(.minutes(2)))
    func slowUploadsBesideManyBufferedCallsAllFinish() async throws {
        let executor = URLSessionExecutor(configuration: .ephemeral)
        let other = URLSessionExecutor(configuration: .ephemeral)
        let target = try StreamServer.request(.post) |> path("upload") |> timeout(60)
        let uploads = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        let received = try await executor.send(target |> upload(Self.chunks(10, of: 1_000, every: .milliseconds(50))) |> decode(Received.self))
                        #expect(received.length == 10_000)
                    }
                }
                try await group.waitForAll()
            }
        }
        let plain = try HTTPBin.request() |> path("bytes/100") |> timeout(60)
        _ = try await together { _ in
            let response = try await other.send(plain)
            #expect(response.body.count == 100)
        }
        try await uploads.value
    }

    @Test(.timeLimit(.minutes(2)))
    func slowSequenceUploadsDoNotHoldUpOtherRequests() async throws {
        // Producers that make libcurl's reads of the body pipe wait, beside plain requests on
        // another executor: the plain ones should finish while the uploads are still producing.
        let executor = URLSessionExecutor(configuration: .ephemeral)
        let other = URLSessionExecutor(configuration: .ephemeral)
        let target = try StreamServer.request(.post) |> path("upload") |> timeout(60)
        let uploads = Task {
            try await together { _ in
                let chunks = AsyncStream<Data> { continuation in
                    Task {
                        for _ in 0..<10 {
                            try? await Task.sleep(for: .milliseconds(100))
                            continuation.yield(Data(repeating: 0x43, count: 1_000))
                        }
                        continuation.finish()
                    }
                }
                let received = try await executor.send(target |> upload(chunks) |> decode(Received.self))
                #expect(received.length == 10_000)
            }
        }
        try await Task.sleep(for: .milliseconds(50))
        let clock = ContinuousClock()
        let start = clock.now
        for _ in 0..<20 {
            let response = try await other.send(try HTTPBin.request() |> path("bytes/100"))
            #expect(response.body.count == 100)
        }
        let plain = start.duration(to: clock.now)
        let all: Duration = try await uploads.value
        #expect(all >= .seconds(1))
        // Twenty small requests take about 40 ms in all on their own. On FoundationNetworking a
        // body pipe waiting for its producer holds up every other URLSession transfer of the
        // process until the uploads end (measured: 1.04 s with one slow upload, 1.10 s with 64):
        // see the Known limits article. Recorded, not hidden; it must pass once fixed.
        withKnownIssue("a waiting body pipe stalls other URLSession transfers (FoundationNetworking)", isIntermittent: true) {
            #expect(plain < .milliseconds(900))
        }
    }
}
