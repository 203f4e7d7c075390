#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reading a whole body: into memory for tests and in-memory executors, or into a temporary file
/// for an uploader that needs one. Both hold the body to its length as a transport does
/// (``FramedBody``), so what they read is what a server would receive.
extension BodySource {
    /// Reads the whole body into memory, refusing more than `limit` bytes: for tests and
    /// in-memory executors.
    /// - Parameter limit: The most bytes to accept.
    /// - Returns: The bytes.
    /// - Throws: ``CourierError``.
    public func collect(upTo limit: Int) async throws(CourierError) -> Data {
        var data = Data()
        do {
            // Held to its length as a transport holds it: a stub sees what a server would.
            for try await chunk in FramedBody(self) {
                guard data.count + chunk.count <= limit else { throw CourierError(.responseTooLarge(limit: limit)) }
                data.append(chunk)
            }
        } catch {
            throw CourierError.wrapping(error, request: nil)
        }
        return data
    }

    /// A file to upload this body from: a temporary copy written now, held to the body's length
    /// as it is copied (the second value says to remove it afterwards; always `true`). For an
    /// uploader that reads a file past the length it announced (FoundationNetworking does).
    package func uploadFile() async throws -> (url: URL, temporary: Bool) {
        if case .file(let url) = storage {
            guard url.isFileURL, FileManager.default.isReadableFile(atPath: url.path) else {
                throw RequestProblem(.bodyEncodingFailed, "the file \(url.lastPathComponent.debugDescription) could not be read")
            }
        }
        let temporary = FileManager.default.temporaryDirectory.appendingPathComponent("courier-upload-\(UUID().uuidString)")
        // Created exclusively, never through a link, readable by its owner only: it holds the body.
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw RequestProblem(.bodyEncodingFailed, "a temporary file for the request body could not be created")
        }
        let handle = OpenFile(descriptor: descriptor)
        do {
            defer { handle.close() }
            // Held to its length as every transport holds a streamed body: a sequence that runs
            // past it is refused before it fills the disk.
            for try await chunk in FramedBody(self) { try handle.write(chunk) }
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
        return (temporary, true)
    }
}
