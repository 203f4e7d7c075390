import Courier
import Foundation
import Testing

/// What a first hour with streaming asked for: a checksum that needs no CryptoKit, a required
/// terminator, typed error bodies for streams, main-actor iteration.
@Suite("Streaming: first-hour helpers")
struct FirstHourTests {
    // MARK: SHA-256

    /// FIPS 180-4 / NIST example vectors.
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        (
            "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
        ),
    ])
    func sha256KnownAnswers(message: String, expected: String) {
        var hasher = SHA256()
        hasher.update(Data(message.utf8))
        #expect(hasher.hexDigest == expected)
    }

    @Test func sha256OfAMillionAs() {
        var hasher = SHA256()
        let block = Data(repeating: UInt8(ascii: "a"), count: 1000)
        for _ in 0..<1000 { hasher.update(block) }
        #expect(hasher.hexDigest == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    /// Any split of the input gives the same digest: pieces of 0–130 bytes around the 64-byte
    /// block and the 55/56-byte padding edges.
    @Test(arguments: 0..<8)
    func sha256IsTheSameWhateverThePieces(seed: Int) {
        let generator = RandomSource.seeded(UInt64(seed))
        let length = Int(generator.next() % 300)
        let message = Data((0..<length).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
        var hasher = SHA256()
        var offset = 0
        while offset < message.count {
            let piece = min(message.count - offset, Int(generator.next() % 131))
            hasher.update(message[offset..<offset + piece])
            offset += piece
        }
        #expect(hasher.digest == SHA256.hash(message))
        #expect(hasher.digest.count == 32)
    }

    @Test func aDownloadIsVerifiedByItsChecksum() async throws {
        let executor = InMemoryExecutor { _ in .text("abc") }
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("courier-sha-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: destination) }
        let good = DownloadOptions(verify: verifySHA256("BA7816BF 8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD"))
        let download = try await executor.download(.get |> url("https://files.test/abc"), to: destination, options: good)
        #expect(download.size == 3)
        try? FileManager.default.removeItem(at: destination)
        let bad = DownloadOptions(verify: verifySHA256(String(repeating: "0", count: 64)))
        let error = await expectCourierError { _ = try await executor.download(.get |> url("https://files.test/abc"), to: destination, options: bad) }
        guard case .fileFailure(let message) = error?.cause else {
            Issue.record("expected fileFailure, got \(String(describing: error))")
            return
        }
        #expect(message.contains("SHA-256"))
        #expect(!FileManager.default.fileExists(atPath: destination.path))
    }

    // MARK: A required terminator

    static let done: @Sendable (ServerSentEvent) -> Bool = { $0.data == "[DONE]" }

    @Test func aStreamThatEndsBeforeARequiredTerminatorIsATruncation() async throws {
        let cut = InMemoryExecutor { _ in .serverSentEvents([ServerSentEvent(data: "Hel"), ServerSentEvent(data: "lo")]) }
        let response = try await cut.stream(.get |> url("https://llm.test/chat"))
        var received: [String] = []
        let error = await expectCourierError {
            for try await event in response.body.serverSentEvents(until: Self.done, requireTerminator: true) { received.append(event.data) }
        }
        #expect(received == ["Hel", "lo"])
        guard case .transport(let failure) = error?.cause else {
            Issue.record("expected a truncation, got \(String(describing: error))")
            return
        }
        #expect(failure.kind == .truncatedBody)
        #expect(error?.isTransient == true)
        // Without the requirement (the default), the same body ends normally.
        let again = try await cut.stream(.get |> url("https://llm.test/chat"))
        var count = 0
        for try await _ in again.body.serverSentEvents(until: Self.done) { count += 1 }
        #expect(count == 2)
    }

    @Test func aRequiredTerminatorThatComesEndsTheStreamCleanly() async throws {
        let whole = InMemoryExecutor { _ in
            .serverSentEvents([ServerSentEvent(data: "Hi"), ServerSentEvent(data: "[DONE]"), ServerSentEvent(data: "after")])
        }
        let response = try await whole.stream(.get |> url("https://llm.test/chat"))
        var received: [String] = []
        for try await event in response.body.serverSentEvents(until: Self.done, requireTerminator: true) { received.append(event.data) }
        #expect(received == ["Hi"])
        #expect(MediaType.eventStream.rawValue == "text/event-stream")
    }

    // MARK: Typed error bodies for streams

    struct APIProblem: Decodable, Error, Equatable { var code: String; var message: String }

    @Test func aStreamedErrorBodyDecodesIntoTheCallersType() async throws {
        let executor = InMemoryExecutor { _ in .json(["code": "expired", "message": "the token expired"], status: 401) }
        let response = try await executor.stream(.get |> url("https://llm.test/chat") |> bearer("SECRET"))
        let error = await expectCourierError { _ = try await response.validated(error: APIProblem.self) }
        guard case .unacceptableStatus(401, _) = error?.cause else {
            Issue.record("expected 401, got \(String(describing: error))")
            return
        }
        #expect(error?.errorBody(as: APIProblem.self) == APIProblem(code: "expired", message: "the token expired"))
        #expect(!"\(String(describing: error))".contains("SECRET"))
        let ok = InMemoryExecutor { _ in .text("fine") }
        let accepted = try await ok.stream(.get |> url("https://llm.test/chat")).validated(error: APIProblem.self)
        #expect(accepted.status == 200)
        let notJSON = InMemoryExecutor { _ in .text("<html>", status: 502) }
        let plain = await expectCourierError {
            _ = try await notJSON.stream(.get |> url("https://llm.test/chat")).validated(error: APIProblem.self)
        }
        #expect(plain?.status == 502)
        #expect(plain?.errorBody(as: APIProblem.self) == nil)
    }

    // MARK: Main-actor iteration

    @MainActor
    @Test func iteratingOnTheMainActorDeliversEveryEventInOrder() async throws {
        let events = (0..<200).map { ServerSentEvent(data: "token \($0)") }
        let executor = InMemoryExecutor { _ in .serverSentEvents(events) }
        let response = try await executor.stream(.get |> url("https://llm.test/chat"))
        var received: [String] = []
        for try await event in response.body.serverSentEvents {
            MainActor.assertIsolated()
            received.append(event.data)
        }
        #expect(received == events.map(\.data))
        var lines = 0
        for try await _ in ByteStream(Data("a\nb\nc".utf8)).lines { lines += 1 }
        #expect(lines == 3)
    }
}
