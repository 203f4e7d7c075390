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

/// The files one download writes: `<destination>.partial` (the body so far) and
/// `<destination>.partial.validator` (the `ETag` or `Last-Modified` a resume sends in `If-Range`).
///
/// Both are opened without following symbolic links, created exclusively with owner-only
/// permissions, and written through the descriptor Courier opened: a link planted where a partial
/// file should be is never written through, never measured as progress and never renamed into
/// place. What is odd (a link, a special file, a file of another user) is removed and the
/// download starts over; a directory in the way is a ``CourierError/Cause/fileFailure(_:)``.
final class DownloadFiles {
    let destination: URL
    let partialPath: String
    let validatorPath: String
    /// The partial file, once ``prepare(keeping:validator:request:)`` opened it.
    private var descriptor: Int32 = -1

    init(destination: URL) {
        self.destination = destination
        partialPath = destination.path + ".partial"
        validatorPath = destination.path + ".partial.validator"
    }

    deinit { closeDescriptor() }

    /// The partial file, as a URL (for ``DownloadOptions/verify``).
    var partial: URL { URL(fileURLWithPath: partialPath) }

    /// The largest validator kept; anything longer is not one Courier wrote.
    private static let maximumValidatorSize = 4096

    // MARK: Inspecting

    /// What is at a path, without following a link.
    enum Entry: Equatable {
        case missing
        /// A regular file; `ours` when the current user owns it.
        case regular(size: Int64, ours: Bool)
        /// Something Courier never writes through (the words say what).
        case other(String)
    }

    static func inspect(_ path: String) -> Entry {
        var info = stat()
        guard lstat(path, &info) == 0 else { return errno == ENOENT ? .missing : .other("cannot be inspected") }
        switch info.st_mode & mode_t(S_IFMT) {
        case mode_t(S_IFREG): return .regular(size: Int64(info.st_size), ours: info.st_uid == geteuid())
        case mode_t(S_IFLNK): return .other("is a symbolic link")
        case mode_t(S_IFDIR): return .other("is a directory")
        default: return .other("is not a regular file")
        }
    }

    /// Removes what is at `path` unless it is a directory (which fails the download: Courier
    /// never removes one). A link is removed itself; its target is untouched.
    private static func clear(_ path: String, request: Request) throws(CourierError) {
        if case .other("is a directory") = inspect(path) {
            throw CourierError(
                .fileFailure("\(URL(fileURLWithPath: path).lastPathComponent.debugDescription) is a directory"), request: request)
        }
        if unlink(path) != 0, errno != ENOENT {
            throw fileError("could not remove \(URL(fileURLWithPath: path).lastPathComponent)", errno, request)
        }
    }

    /// The partial file's size and validator, when a partial file this user wrote can be
    /// resumed. Anything odd in their place is removed (the download starts over).
    func resumable(request: Request) throws(CourierError) -> (size: Int64, validator: String)? {
        guard case .regular(let size, let ours) = Self.inspect(partialPath), ours, size > 0,
            let validator = readValidator()
        else {
            // Not resumable: clear the way for a new partial file (links and odd files included).
            if Self.inspect(partialPath) != .missing { try Self.clear(partialPath, request: request) }
            if Self.inspect(validatorPath) != .missing { try Self.clear(validatorPath, request: request) }
            return nil
        }
        return (size, validator)
    }

    /// The stored validator: a small regular file of this user's, read without following a link.
    private func readValidator() -> String? {
        guard case .regular(let size, true) = Self.inspect(validatorPath), size > 0, size <= Self.maximumValidatorSize else {
            return nil
        }
        let file = open(validatorPath, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard file >= 0 else { return nil }
        defer { _ = close(file) }
        var bytes = [UInt8](repeating: 0, count: Int(size))
        let count = bytes.withUnsafeMutableBytes { read(file, $0.baseAddress, $0.count) }
        guard count == Int(size), let text = String(bytes: bytes, encoding: .utf8), !text.isEmpty,
            HTTPSyntax.headerValueDefect(text) == nil
        else { return nil }
        return text
    }

    // MARK: Writing

    /// Opens the partial file keeping its first `offset` bytes (0: a new, empty one, created
    /// exclusively and readable by its owner only) and records the validator a later resume
    /// will need.
    func prepare(keeping offset: Int64, validator: String?, request: Request) throws(CourierError) {
        closeDescriptor()
        let name = URL(fileURLWithPath: partialPath).lastPathComponent
        if offset == 0 {
            try Self.clear(partialPath, request: request)
            descriptor = open(partialPath, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else { throw Self.fileError("could not create \(name)", errno, request) }
        } else {
            descriptor = open(partialPath, O_RDWR | O_NOFOLLOW | O_CLOEXEC)
            guard descriptor >= 0 else { throw Self.fileError("could not open \(name)", errno, request) }
            var info = stat()
            guard fstat(descriptor, &info) == 0, info.st_mode & mode_t(S_IFMT) == mode_t(S_IFREG), info.st_uid == geteuid(),
                Int64(info.st_size) >= offset
            else {
                closeDescriptor()
                throw CourierError(.fileFailure("\(name) changed while the download was resumed"), request: request)
            }
            guard ftruncate(descriptor, off_t(offset)) == 0, lseek(descriptor, off_t(offset), SEEK_SET) == off_t(offset) else {
                let code = errno
                closeDescriptor()
                throw Self.fileError("could not prepare \(name)", code, request)
            }
        }
        try Self.clear(validatorPath, request: request)
        guard let validator else { return }
        let file = open(validatorPath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard file >= 0 else { throw Self.fileError("could not create \(URL(fileURLWithPath: validatorPath).lastPathComponent)", errno, request) }
        defer { _ = close(file) }
        if let code = OpenFile.write(Data(validator.utf8), to: file) {
            throw Self.fileError("could not write \(URL(fileURLWithPath: validatorPath).lastPathComponent)", code, request)
        }
    }

    /// Appends the body to the partial file; returns how many bytes were written.
    /// - Parameters:
    ///   - expected: How many bytes the response announced (its `Content-Range` or length); a
    ///     body that goes past it is refused as soon as it does.
    func writeBody(
        _ body: ByteStream, from offset: Int64, expected: Int64?, progress: TransferProgress?, total: Int64?, request: Request
    ) async throws(CourierError) -> Int64 {
        let name = URL(fileURLWithPath: partialPath).lastPathComponent
        var written: Int64 = 0
        var iterator = body.makeAsyncIterator()
        // Woken per quarter mebibyte (or every few milliseconds on a slow link), not per network
        // chunk: on a fast link the wake-ups would cost more CPU than the writes.
        while let chunks = try await iterator.nextChunks(atLeast: Self.batch, upTo: 1 << 20) {
            for chunk in chunks {
                if let expected, written + Int64(chunk.count) > expected {
                    body.cancel()
                    throw CourierError(
                        .transport(TransportFailure(.badResponse, message: "the body is longer than the \(expected) bytes the response announced")),
                        request: request)
                }
                if let code = OpenFile.write(chunk, to: descriptor) {
                    body.cancel()
                    throw Self.fileError("could not write \(name)", code, request)
                }
                written += Int64(chunk.count)
            }
            progress?.update(completed: offset + written, expected: total)
        }
        return written
    }

    /// Moves the complete file into place (replacing what is there) in one atomic rename, once
    /// sure the partial path still names the file Courier wrote.
    func commit(request: Request) throws(CourierError) {
        var opened = stat()
        var named = stat()
        guard descriptor >= 0, fstat(descriptor, &opened) == 0, lstat(partialPath, &named) == 0, opened.st_ino == named.st_ino,
            opened.st_dev == named.st_dev
        else {
            closeDescriptor()
            throw CourierError(.fileFailure("the partial file was replaced while it was written"), request: request)
        }
        closeDescriptor()
        guard rename(partialPath, destination.path) == 0 else {
            throw Self.fileError("could not move the download into place", errno, request)
        }
        _ = unlink(validatorPath)
    }

    /// Removes the partial file and its validator (names only: nothing is followed).
    func discard() {
        closeDescriptor()
        _ = unlink(partialPath)
        _ = unlink(validatorPath)
    }

    private func closeDescriptor() {
        if descriptor >= 0 { _ = close(descriptor) }
        descriptor = -1
    }

    /// How many bytes a download's writer would rather wait for before it is woken.
    static let batch = 256 << 10

    static func fileError(_ message: String, _ code: Int32, _ request: Request) -> CourierError {
        let error = POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        return CourierError(.fileFailure("\(message): \(SystemErrorText.text(for: code))"), request: request, underlyingError: error)
    }
}

/// `Content-Range: bytes start-end/total` (or `bytes */total`), as a `206` announces its part.
struct ContentRange: Equatable {
    var start: Int64
    var end: Int64
    var total: Int64?

    init?(_ value: String?) {
        guard let value = value?.trimmingOptionalWhitespace(), value.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = value.dropFirst(6).trimmingOptionalWhitespace()
        let parts = spec.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let dash = parts[0].firstIndex(of: "-"), let start = Int64(parts[0][..<dash]),
            let end = Int64(parts[0][parts[0].index(after: dash)...]), start >= 0, end >= start,
            // The part's length (end − start + 1) must fit.
            end - start < Int64.max
        else { return nil }
        self.start = start
        self.end = end
        if parts[1] == "*" {
            total = nil
        } else {
            guard let total = Int64(parts[1]), total > end else { return nil }
            self.total = total
        }
    }

    /// How many bytes the part has.
    var length: Int64 { end - start + 1 }
}
