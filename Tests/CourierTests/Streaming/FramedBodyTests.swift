@_spi(Transports) import CourierCore
import Foundation
import Testing

/// `FramedBody`, the one rule every transport sends a streamed body by: no byte past the
/// declared length, the last bytes only once the source has ended, a short body refused.
@Suite("Streaming: a body held to its declared length")
struct FramedBodyTests {
    /// What the transport was handed, and how reading ended.
    struct Outcome: Equatable, CustomStringConvertible {
        var handed: [Int]
        var error: String?
        var description: String { "handed \(handed), \(error ?? "complete")" }
    }

    static func read(_ chunks: [Int], length: Int64?) async -> Outcome {
        let source = BodySource.sequence(produced(chunks.map { Data(count: $0) }), length: length)
        var handed: [Int] = []
        do {
            for try await chunk in FramedBody(source) { handed.append(chunk.count) }
            return Outcome(handed: handed, error: nil)
        } catch let error as CourierError {
            guard case .invalidRequest(let problems) = error.cause, let problem = problems.first, problem.kind == .invalidFraming else {
                return Outcome(handed: handed, error: "unexpected \(error)")
            }
            return Outcome(handed: handed, error: problem.message)
        } catch {
            return Outcome(handed: handed, error: "unexpected \(error)")
        }
    }

    /// A producer's chunks, the length it declares, what the transport is handed, and the
    /// words of the error (`nil`: the body is complete).
    struct Case: Sendable, CustomTestStringConvertible {
        var chunks: [Int]
        var length: Int64
        var handed: [Int]
        var error: String?
        var testDescription: String { "\(chunks) declared \(length)" }

        init(_ chunks: [Int], _ length: Int64, _ handed: [Int], _ error: String? = nil) {
            self.chunks = chunks
            self.length = length
            self.handed = handed
            self.error = error
        }
    }

    static let cases: [Case] = [
        Case([400, 600], 1_000, [400, 600]),
        Case([1_000], 1_000, [1_000]),
        Case([0, 1_000, 0], 1_000, [1_000]),
        Case([], 0, []),
        Case([1_068], 1_000, [], "more than the 1000 bytes"),
        Case([990, 68], 1_000, [990], "more than the 1000 bytes"),
        // The declared length, then more: the chunk that completed it is never handed over.
        Case([1_000, 68], 1_000, [], "more than the 1000 bytes"),
        Case([500, 500, 1], 1_000, [500], "more than the 1000 bytes"),
        Case([1], 0, [], "more than the 0 bytes"),
        Case([500, 400], 1_000, [500, 400], "produced 900 bytes but declared a length of 1000"),
        Case([], 1, [], "produced 0 bytes but declared a length of 1"),
    ]

    @Test(arguments: cases)
    func aSequenceIsHeldToItsLength(_ check: Case) async {
        let outcome = await Self.read(check.chunks, length: check.length)
        #expect(outcome.handed == check.handed, "\(outcome)")
        if let error = check.error {
            #expect(outcome.error?.contains(error) == true, "\(outcome)")
        } else {
            #expect(outcome.error == nil, "\(outcome)")
        }
    }

    @Test func aBodyOfUnknownLengthIsHandedOverAsItComes() async {
        let outcome = await Self.read([3, 0, 5_000, 1], length: nil)
        #expect(outcome == Outcome(handed: [3, 5_000, 1], error: nil))
    }

    /// The chunk that completes the length waits until the source has said it is done: the
    /// source is asked again before the transport gets it.
    @Test func theLastChunkWaitsForTheSourcesEnd() async throws {
        let log = Log()
        let source = BodySource.sequence(LoggingChunks(sizes: [600, 400], log: log), length: 1_000)
        for try await chunk in FramedBody(source) { log.append("sent \(chunk.count)") }
        #expect(log.entries == ["pulled 600", "sent 600", "pulled 400", "pulled end", "sent 400"])
    }

    @Test func aFileThatGrowsOrShrinksAfterItsLengthWasTakenFails() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-framed-\(UUID().uuidString).bin")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(count: 3_000).write(to: file)
        let framed = FramedBody(.file(file), chunkSize: 1_000)
        #expect(framed.length == 3_000)
        try Data(count: 3_500).write(to: file)
        let grown = await Self.drain(framed)
        #expect(grown.handed == [1_000, 1_000], "\(grown)")
        #expect(grown.error?.contains("grew past the 3000 bytes it had when its upload started") == true, "\(grown)")
        try Data(count: 2_500).write(to: file)
        let shrunk = await Self.drain(framed)
        #expect(shrunk.handed == [1_000, 1_000, 500], "\(shrunk)")
        #expect(shrunk.error?.contains("shrank while it was uploaded: 2500 of the 3000 bytes") == true, "\(shrunk)")
        try Data(count: 3_000).write(to: file)
        let same = await Self.drain(framed)
        #expect(same == Outcome(handed: [1_000, 1_000, 1_000], error: nil))
    }

    /// Parts whose file part grew are refused the same way.
    @Test func partsThatGrowFail() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-framed-\(UUID().uuidString).bin")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(count: 100).write(to: file)
        let request = Request.post |> url("https://uploads.example.com/form") |> multipart([.field("a", "b"), .file("f", at: file)])
        let source = try #require(request.bodySource)
        let framed = FramedBody(source)
        try Data(count: 200).write(to: file)
        let outcome = await Self.drain(framed)
        #expect(outcome.error?.contains("the body's parts grew past") == true, "\(outcome)")
    }

    /// A stub reads a body as a transport sends it: `collect(upTo:)` keeps the same rule.
    @Test func collectingABodyKeepsTheRule() async {
        let source = BodySource.sequence(produced([Data(count: 1_000), Data("GET /smuggled HTTP/1.1\r\n\r\n".utf8)]), length: 1_000)
        do {
            let data = try await source.collect(upTo: 1 << 20)
            Issue.record("collected \(data.count) bytes of a body longer than its length")
        } catch {
            guard case .invalidRequest(let problems) = error.cause else {
                Issue.record("expected an invalid request, got \(error)")
                return
            }
            #expect(problems.map(\.kind) == [.invalidFraming])
        }
    }

    /// A cancelled reader's short body is a cancellation, not a framing error.
    @Test func aCancelledReadIsACancellation() async {
        let reading = Task {
            let source = BodySource.sequence(StallingChunks(), length: 10)
            for try await _ in FramedBody(source) {}
        }
        reading.cancel()
        let result = await reading.result
        guard case .failure(let error) = result else {
            Issue.record("a cancelled read of a stalled body finished")
            return
        }
        #expect(error is CancellationError, "\(error)")
    }

    static func drain(_ framed: FramedBody) async -> Outcome {
        var handed: [Int] = []
        do {
            for try await chunk in framed { handed.append(chunk.count) }
            return Outcome(handed: handed, error: nil)
        } catch let error as CourierError {
            guard case .invalidRequest(let problems) = error.cause, let problem = problems.first else {
                return Outcome(handed: handed, error: "unexpected \(error)")
            }
            return Outcome(handed: handed, error: problem.message)
        } catch {
            return Outcome(handed: handed, error: "unexpected \(error)")
        }
    }
}

/// Chunks a producer yields, one by one.
private func produced(_ chunks: [Data]) -> AsyncStream<Data> {
    AsyncStream { continuation in
        for chunk in chunks { continuation.yield(chunk) }
        continuation.finish()
    }
}

/// Events in the order they happened, across tasks.
private final class Log: Sendable {
    private let lines = Locked<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var entries: [String] { lines.withLock { $0 } }
}

/// Chunks of the given sizes, logging each time the source is asked for one.
private struct LoggingChunks: AsyncSequence, Sendable {
    typealias Element = Data
    let sizes: [Int]
    let log: Log
    func makeAsyncIterator() -> Iterator { Iterator(sizes: sizes, log: log) }

    struct Iterator: AsyncIteratorProtocol {
        let sizes: [Int]
        let log: Log
        var index = 0
        mutating func next() async -> Data? {
            guard index < sizes.count else {
                log.append("pulled end")
                return nil
            }
            defer { index += 1 }
            log.append("pulled \(sizes[index])")
            return Data(count: sizes[index])
        }
    }
}

/// A producer that never yields until it is cancelled.
private struct StallingChunks: AsyncSequence, Sendable {
    typealias Element = Data
    func makeAsyncIterator() -> Iterator { Iterator() }
    struct Iterator: AsyncIteratorProtocol {
        mutating func next() async throws -> Data? {
            try await Task.sleep(for: .seconds(86_400))
            return nil
        }
    }
}
