import Foundation
import Testing

@testable import CourierCore

/// File reading and writing through a descriptor (FoundationEssentials has no `FileHandle`).
@Suite("Files without FileHandle")
struct OpenFileTests {
    private func temporaryFile(_ bytes: [UInt8]) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-open-file-\(UUID().uuidString)")
        try Data(bytes).write(to: url)
        return url
    }

    @Test func readsAFileInPiecesToItsEnd() throws {
        let bytes = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let url = try temporaryFile(bytes)
        defer { try? FileManager.default.removeItem(at: url) }
        let file = try OpenFile.reading(url.path)
        var read: [UInt8] = []
        while case let piece = try file.read(upTo: 4096), !piece.isEmpty {
            #expect(piece.count <= 4096)
            read += piece
        }
        #expect(read == bytes)
        #expect(try file.read(upTo: 10).isEmpty)
        file.close()
        file.close()
        #expect(throws: POSIXError.self) { try file.read(upTo: 1) }
        #expect(OpenFile.size(atPath: url.path) == 10_000)
    }

    @Test func aMissingFileIsAnErrorWithTheSystemsReason() throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("courier-missing-\(UUID().uuidString)").path
        let error = try #require(throws: POSIXError.self) { try OpenFile.reading(missing) }
        #expect(error.code == .ENOENT)
        #expect(SystemErrorText.text(for: error) == "No such file or directory")
        #expect(OpenFile.size(atPath: missing) == nil)
        #expect(!OpenFile.isDirectory(atPath: missing))
        #expect(OpenFile.isDirectory(atPath: FileManager.default.temporaryDirectory.path))
    }

    @Test func writesEveryByte() throws {
        let url = try temporaryFile([])
        defer { try? FileManager.default.removeItem(at: url) }
        let descriptor = open(url.path, O_WRONLY | O_TRUNC)
        try #require(descriptor >= 0)
        let file = OpenFile(descriptor: descriptor)
        let bytes = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0) })
        try file.write(bytes)
        try file.write(Data())
        file.close()
        #expect(try Data(contentsOf: url) == bytes)
    }

    /// A Foundation error about a file says what the system said, on every platform.
    @Test func aFoundationFileErrorReadsAsTheSystemsReason() {
        let error = CocoaError(.fileNoSuchFile, userInfo: ["NSUnderlyingError": POSIXError(.ENOENT)])
        #expect(SystemErrorText.text(for: error) == "No such file or directory")
        #expect(SystemErrorText.text(for: 13 as Int32) == "Permission denied")
    }
}
