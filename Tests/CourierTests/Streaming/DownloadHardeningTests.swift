import Courier
import Foundation
import Testing

/// Downloads against odd files on disk and servers that answer a resume wrongly: the partial
/// file is never written through a link, and a resume is byte-exact or starts over.
@Suite("Streaming: download hardening")
struct DownloadHardeningTests {
    let api = "https://files.example.com"
    static let content = DownloadTests.content

    func destination() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("courier-dlh-\(UUID().uuidString).bin")
    }

    func cleanUp(_ url: URL, also others: [URL] = []) {
        for suffix in ["", ".partial", ".partial.validator"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
        for other in others { try? FileManager.default.removeItem(at: other) }
    }

    /// Leaves what an interrupted download leaves: the first `size` bytes and the validator.
    func leavePartial(_ file: URL, size: Int, validator: String = "\"v1\"") throws {
        try Self.content.prefix(size).write(to: URL(fileURLWithPath: file.path + ".partial"))
        try Data(validator.utf8).write(to: URL(fileURLWithPath: file.path + ".partial.validator"))
    }

    /// A server that answers a range request with `partial(request)` and anything else with
    /// the whole file (ETag `"v1"`, unless told otherwise).
    static func server(etag: String = "\"v1\"", partial: @escaping @Sendable (Int) -> Stub) -> (InMemoryExecutor, Box<[Request]>) {
        let seen = Box<[Request]>([])
        let executor = InMemoryExecutor { request in
            seen.withLock { $0.append(request) }
            if let range = request.headers[.range], let from = Int(range.dropFirst("bytes=".count).dropLast()) {
                return partial(from)
            }
            let headers: HTTPHeaders = [.eTag: etag, .contentLength: "\(content.count)"]
            return Stub.stream([content.prefix(4_000), content.dropFirst(4_000)].map { Data($0) }, headers: headers)
        }
        return (executor, seen)
    }

    /// A `206` for bytes `from...` with the given headers (Content-Range and ETag right unless
    /// replaced).
    static func part(from: Int, body: Data? = nil, headers extra: HTTPHeaders = [:]) -> Stub {
        let body = body ?? Data(content[from...])
        var headers: HTTPHeaders = [.eTag: "\"v1\"", .contentRange: "bytes \(from)-\(content.count - 1)/\(content.count)"]
        // An empty value removes the field.
        for field in extra { headers[field.name] = field.value.isEmpty ? nil : field.value }
        return Stub.stream([body], status: 206, headers: headers)
    }

    /// The kind of transport failure a download to `file` ends with (`nil`, and an issue, for
    /// anything else).
    func failureKind(downloading file: URL, with executor: InMemoryExecutor) async -> TransportFailure.Kind? {
        let error = await expectCourierError { _ = try await executor.download(.get |> url(api + "/f"), to: file) }
        guard case .transport(let failure) = error?.cause else {
            Issue.record("expected a transport failure, got \(String(describing: error))")
            return nil
        }
        return failure.kind
    }

    static func permissions(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return try #require(attributes[.posixPermissions] as? NSNumber).intValue
    }

    // MARK: Files on disk

    @Test func aPartialFileThatIsALinkIsNeverWrittenThroughOrRenamed() async throws {
        let file = destination()
        let victim = destination()
        defer { cleanUp(file, also: [victim]) }
        let secret = Data("the victim's own bytes".utf8)
        try secret.write(to: victim)
        try FileManager.default.createSymbolicLink(atPath: file.path + ".partial", withDestinationPath: victim.path)
        try Data("\"v1\"".utf8).write(to: URL(fileURLWithPath: file.path + ".partial.validator"))
        let (executor, seen) = Self.server { Self.part(from: $0) }

        let download = try await executor.download(.get |> url(api + "/f"), to: file)

        #expect(download.resumedFrom == 0)
        #expect(try Data(contentsOf: victim) == secret)
        #expect(try Data(contentsOf: file) == Self.content)
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        #expect(attributes[.type] as? FileAttributeType == .typeRegular)
        let firstRange: String? = seen.withLock { $0.first?.headers[.range] }
        #expect(firstRange == nil)
    }

    @Test func aValidatorThatIsALinkIsNeverWrittenThrough() async throws {
        let file = destination()
        let victim = destination()
        defer { cleanUp(file, also: [victim]) }
        let secret = Data("keep me".utf8)
        try secret.write(to: victim)
        try FileManager.default.createSymbolicLink(atPath: file.path + ".partial.validator", withDestinationPath: victim.path)
        // Interrupted after 3,000 bytes: the validator is written on the way.
        let (executor, _) = Self.server { Self.part(from: $0) }
        let cut = InMemoryExecutor { _ in
            Stub.stream([Data(Self.content)], headers: [.eTag: "\"v1\"", .contentLength: "\(Self.content.count)"]).failing(afterBytes: 3_000)
        }
        _ = await expectCourierError { _ = try await cut.download(.get |> url(api + "/f"), to: file) }
        #expect(try Data(contentsOf: victim) == secret)
        let validatorType = try FileManager.default.attributesOfItem(atPath: file.path + ".partial.validator")[.type]
        #expect(validatorType as? FileAttributeType == .typeRegular)
        let download = try await executor.download(.get |> url(api + "/f"), to: file)
        #expect(download.resumedFrom == 3_000)
        #expect(try Data(contentsOf: file) == Self.content)
        #expect(try Data(contentsOf: victim) == secret)
    }

    @Test func filesCourierCreatesAreReadableByTheirOwnerOnly() async throws {
        let file = destination()
        defer { cleanUp(file) }
        let cut = InMemoryExecutor { _ in
            Stub.stream([Data(Self.content)], headers: [.eTag: "\"v1\"", .contentLength: "\(Self.content.count)"]).failing(afterBytes: 2_000)
        }
        _ = await expectCourierError { _ = try await cut.download(.get |> url(api + "/f"), to: file) }
        #expect(try Self.permissions(file.path + ".partial") == 0o600)
        #expect(try Self.permissions(file.path + ".partial.validator") == 0o600)
    }

    @Test func aDirectoryWhereThePartialFileGoesFailsBeforeAnythingIsSent() async throws {
        let file = destination()
        defer { cleanUp(file) }
        try FileManager.default.createDirectory(atPath: file.path + ".partial", withIntermediateDirectories: false)
        let (executor, seen) = Self.server { Self.part(from: $0) }
        let error = await expectCourierError { _ = try await executor.download(.get |> url(api + "/f"), to: file) }
        guard case .fileFailure(let message) = error?.cause else {
            Issue.record("expected fileFailure, got \(String(describing: error))")
            return
        }
        #expect(message.contains("directory"))
        #expect(seen.withLock { $0.isEmpty })
    }

    // MARK: Resume integrity

    @Test(arguments: [
        ("a start other than the one asked", [.contentRange: "bytes 2000-9999/10000"] as HTTPHeaders),
        ("a range that stops before the end", [.contentRange: "bytes 3000-8999/10000"] as HTTPHeaders),
        ("a total that disagrees with the range", [.contentRange: "bytes 3000-9999/20000"] as HTTPHeaders),
        ("a Content-Length that disagrees with the range", [.contentLength: "100"] as HTTPHeaders),
        ("a changed file (another ETag)", [.eTag: "\"v2\""] as HTTPHeaders),
        ("no validator at all", [.eTag: ""] as HTTPHeaders),
        ("an unreadable Content-Range", [.contentRange: "bytes 3000-/10000"] as HTTPHeaders),
    ])
    func aResumeThatIsNotByteExactStartsOver(_ label: String, _ headers: HTTPHeaders) async throws {
        let file = destination()
        defer { cleanUp(file) }
        try leavePartial(file, size: 3_000)
        let (executor, seen) = Self.server { Self.part(from: $0, headers: headers) }
        let download = try await executor.download(.get |> url(api + "/f"), to: file)
        #expect(download.resumedFrom == 0, "\(label)")
        #expect(try Data(contentsOf: file) == Self.content, "\(label)")
        let sent: Int = seen.withLock { $0.count }
        #expect(sent == 2, "\(label)")
    }

    @Test func aPartThatIsLongerThanItsRangeFailsAndIsDiscarded() async throws {
        let file = destination()
        defer { cleanUp(file) }
        try leavePartial(file, size: 3_000)
        let longer = Data(Self.content[3_000...]) + Data(repeating: 7, count: 500)
        let (executor, _) = Self.server { Self.part(from: $0, body: longer) }
        #expect(await failureKind(downloading: file, with: executor) == .badResponse)
        #expect(!FileManager.default.fileExists(atPath: file.path))
    }

    @Test func aPartThatIsShorterThanItsRangeIsATruncationAndKeepsThePartialFile() async throws {
        let file = destination()
        defer { cleanUp(file) }
        try leavePartial(file, size: 3_000)
        let shorter = Data(Self.content[3_000..<6_000])
        let (executor, _) = Self.server { Self.part(from: $0, body: shorter) }
        #expect(await failureKind(downloading: file, with: executor) == .truncatedBody)
        #expect(!FileManager.default.fileExists(atPath: file.path))
        let kept = try Data(contentsOf: URL(fileURLWithPath: file.path + ".partial"))
        #expect(kept == Self.content.prefix(6_000))
        // The next attempt continues from there, byte-exact.
        let (honest, _) = Self.server { Self.part(from: $0) }
        let download = try await honest.download(.get |> url(api + "/f"), to: file)
        #expect(download.resumedFrom == 6_000)
        #expect(try Data(contentsOf: file) == Self.content)
    }

    @Test func aWholeFileShorterThanItsLengthIsATruncation() async throws {
        let file = destination()
        defer { cleanUp(file) }
        let executor = InMemoryExecutor { _ in
            Stub.stream([Data(Self.content.prefix(5_000))], headers: [.eTag: "\"v1\"", .contentLength: "\(Self.content.count)"])
        }
        #expect(await failureKind(downloading: file, with: executor) == .truncatedBody)
        #expect(!FileManager.default.fileExists(atPath: file.path))
    }
}

