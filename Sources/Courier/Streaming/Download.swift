import Foundation

/// How ``Executor/download(_:to:options:)`` writes, resumes, reports and checks a download.
public struct DownloadOptions: Sendable {
    /// Whether a partial file left by an interrupted download of the same destination is
    /// continued with a `Range` request (guarded by `If-Range`) instead of starting over.
    public var resumes: Bool
    /// Receives progress: bytes on disk so far (a resumed download starts at its partial size)
    /// and the total when known.
    public var progress: TransferProgress?
    /// Checks the complete file before it is moved into place (a checksum, a signature); an error
    /// it throws fails the download and deletes the file.
    public var verify: (@Sendable (URL) async throws -> Void)?
    /// The stream's memory buffer and spill limits.
    public var stream: StreamOptions

    /// Creates options.
    /// - Parameters:
    ///   - resumes: Whether to continue a partial file; `true` by default.
    ///   - progress: Receives progress.
    ///   - verify: Checks the complete file before it is moved into place.
    ///   - stream: The stream's buffer limits; 4 MiB in memory (then the spill file) by default.
    public init(
        resumes: Bool = true, progress: TransferProgress? = nil, verify: (@Sendable (URL) async throws -> Void)? = nil,
        stream: StreamOptions = StreamOptions(bufferLimit: 4 << 20)
    ) {
        self.resumes = resumes
        self.progress = progress
        self.verify = verify
        self.stream = stream
    }
}

/// A finished download.
public struct Download: Sendable {
    /// Where the file is now.
    public var file: URL
    /// The size of the file.
    public var size: Int64
    /// How many bytes were already on disk from an earlier, interrupted attempt (0 when the
    /// download started from scratch).
    public var resumedFrom: Int64
    /// The status and headers of the final response (an empty body).
    public var response: Response
}

extension Executor {
    /// Downloads a response body to a file, streaming it to disk: memory stays bounded whatever
    /// the size.
    ///
    /// The body is written to `<destination>.partial` and moved into place (atomically, replacing
    /// any file there) only once complete and, when ``DownloadOptions/verify`` is set, verified.
    /// If the transfer fails, the partial file and its validator (`ETag` or `Last-Modified`) stay
    /// behind, and the next download to the same destination resumes with `Range: bytes=N-` and
    /// `If-Range`. A server that ignores the range (answers 200) or whose file changed is handled
    /// by starting over; a `206` whose `Content-Range` does not start where the file ends is
    /// refused and the download started over.
    ///
    /// ```swift
    /// let progress = TransferProgress()
    /// let download = try await executor.download(
    ///     .get |> url("https://example.com/big.iso"), to: destination, options: DownloadOptions(progress: progress))
    /// ```
    /// - Parameters:
    ///   - request: The request (a `GET`, usually).
    ///   - destination: A file URL; its directory must exist.
    ///   - options: Resuming, progress, verification and buffering.
    /// - Returns: The file, its size and how much was resumed.
    /// - Throws: ``CourierError``: an unacceptable status (the partial file is kept), a transport
    ///   failure (kept, to resume), ``CourierError/Cause/fileFailure(_:)`` when the file cannot be
    ///   written or fails verification, or cancellation.
    public func download(_ request: Request, to destination: URL, options: DownloadOptions = DownloadOptions()) async throws(CourierError)
        -> Download
    {
        let files = DownloadFiles(destination: destination)
        guard destination.isFileURL else {
            throw CourierError(.invalidRequest([RequestProblem(.invalidURL, "the download destination is not a file URL")]), request: request)
        }
        var isDirectory: ObjCBool = false
        let directory = destination.deletingLastPathComponent().path
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            // Nothing is sent for a download that could not be written anyway.
            throw CourierError(
                .fileFailure("the destination's directory \(destination.deletingLastPathComponent().lastPathComponent.debugDescription) does not exist"),
                request: request)
        }
        defer { options.progress?.finish() }
        var allowResume = options.resumes
        for _ in 0..<2 {
            let existing = allowResume ? files.resumableSize() : nil
            var attempt = request
            if let existing {
                attempt = attempt |> header(.range, "bytes=\(existing.size)-") |> header(.ifRange, existing.validator)
            }
            let response = try await stream(attempt, options: options.stream)
            let offset: Int64
            switch response.status {
            case 206 where existing != nil:
                guard let range = ContentRange(response.headers[.contentRange]), let existing, range.start == existing.size else {
                    // Not the range asked for: start over without one.
                    response.body.cancel()
                    allowResume = false
                    continue
                }
                offset = existing.size
            case 206:
                // A partial answer to a request that asked for no range cannot be the file.
                response.body.cancel()
                throw CourierError(
                    .transport(TransportFailure(.badResponse, message: "206 Partial Content to a request without a Range")),
                    request: request, response: response.head)
            case 200..<300:
                offset = 0
            case 416 where existing != nil:
                // The partial file is not a prefix the server can continue: start over.
                response.body.cancel()
                allowResume = false
                continue
            default:
                let start = try? await response.body.collect(upTo: 64 << 10)
                throw CourierError(
                    .unacceptableStatus(response.status, errorBody: nil), request: request,
                    response: Response(status: response.status, headers: response.headers, body: start ?? Data(), url: response.url))
            }
            let total: Int64? =
                ContentRange(response.headers[.contentRange])?.total ?? response.expectedLength.map { $0 + offset }
            try files.prepare(keeping: offset, validator: Self.validator(of: response), request: request)
            options.progress?.update(completed: offset, expected: total)
            let written = try await files.write(response.body, from: offset, progress: options.progress, total: total, request: request)
            if let verify = options.verify {
                do {
                    try await verify(files.partial)
                } catch {
                    files.discard()
                    throw CourierError(
                        .fileFailure("the downloaded file failed verification: \(error)"), request: request, underlyingError: error)
                }
            }
            try files.commit(request: request)
            var head = response.head
            head.body = Data()
            return Download(file: destination, size: offset + written, resumedFrom: offset, response: head)
        }
        throw CourierError(
            .transport(TransportFailure(.badResponse, message: "the server answered a range request inconsistently twice")),
            request: request)
    }

    /// The response's validator for `If-Range`: a strong `ETag`, else `Last-Modified`.
    static func validator(of response: StreamedResponse) -> String? {
        if let tag = response.headers[.eTag], !tag.hasPrefix("W/"), !tag.isEmpty { return tag }
        return response.headers[.lastModified]
    }
}

/// `Content-Range: bytes start-end/total` (or `bytes */total`).
struct ContentRange {
    var start: Int64
    var total: Int64?

    init?(_ value: String?) {
        guard let value = value?.trimmingCharacters(in: .whitespaces), value.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = value.dropFirst(6)
        let parts = spec.split(separator: "/", maxSplits: 1)
        guard parts.count == 2, let dash = parts[0].firstIndex(of: "-"), let start = Int64(parts[0][..<dash]), start >= 0 else {
            return nil
        }
        self.start = start
        self.total = Int64(parts[1]).flatMap { $0 >= 0 ? $0 : nil }
    }
}

/// The partial file, its validator and the destination of one download.
struct DownloadFiles {
    let destination: URL
    var partial: URL { URL(fileURLWithPath: destination.path + ".partial") }
    var validatorFile: URL { URL(fileURLWithPath: destination.path + ".partial.validator") }

    /// The partial file's size and validator, when there is a partial file to resume.
    func resumableSize() -> (size: Int64, validator: String)? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: partial.path),
            let size = (attributes[.size] as? NSNumber)?.int64Value, size > 0,
            let data = try? Data(contentsOf: validatorFile), let validator = String(data: data, encoding: .utf8),
            !validator.isEmpty, HTTPSyntax.headerValueDefect(validator) == nil
        else { return nil }
        return (size, validator)
    }

    /// Keeps the first `offset` bytes of the partial file (none: a new, empty one) and records
    /// the validator a later resume will need.
    func prepare(keeping offset: Int64, validator: String?, request: Request) throws(CourierError) {
        let manager = FileManager.default
        do {
            if offset == 0 {
                try? manager.removeItem(at: partial)
                guard manager.createFile(atPath: partial.path, contents: nil) else { throw CocoaError(.fileWriteUnknown) }
            } else {
                let handle = try FileHandle(forWritingTo: partial)
                try handle.truncate(atOffset: UInt64(offset))
                try handle.close()
            }
            if let validator {
                try Data(validator.utf8).write(to: validatorFile)
            } else {
                try? manager.removeItem(at: validatorFile)
            }
        } catch {
            throw Self.fileError("could not prepare \(partial.lastPathComponent)", error, request)
        }
    }

    /// Appends the body to the partial file; returns how many bytes were written.
    func write(
        _ body: ByteStream, from offset: Int64, progress: TransferProgress?, total: Int64?, request: Request
    ) async throws(CourierError) -> Int64 {
        let handle: FileHandle
        do {
            handle = try FileHandle(forWritingTo: partial)
            try handle.seek(toOffset: UInt64(offset))
        } catch {
            body.cancel()
            throw Self.fileError("could not open \(partial.lastPathComponent)", error, request)
        }
        defer { try? handle.close() }
        var written: Int64 = 0
        var iterator = body.makeAsyncIterator()
        while let chunk = try await iterator.nextBatch(upTo: 1 << 20) {
            do {
                try handle.write(contentsOf: chunk)
            } catch {
                body.cancel()
                throw Self.fileError("could not write \(partial.lastPathComponent)", error, request)
            }
            written += Int64(chunk.count)
            progress?.update(completed: offset + written, expected: total)
        }
        return written
    }

    /// Moves the complete file into place, replacing what is there, in one atomic rename.
    func commit(request: Request) throws(CourierError) {
        guard rename(partial.path, destination.path) == 0 else {
            let code = errno
            throw Self.fileError(
                "could not move the download into place", POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO), request)
        }
        try? FileManager.default.removeItem(at: validatorFile)
    }

    func discard() {
        try? FileManager.default.removeItem(at: partial)
        try? FileManager.default.removeItem(at: validatorFile)
    }

    static func fileError(_ message: String, _ error: any Error, _ request: Request) -> CourierError {
        CourierError(.fileFailure("\(message): \(error.localizedDescription)"), request: request, underlyingError: error)
    }
}
