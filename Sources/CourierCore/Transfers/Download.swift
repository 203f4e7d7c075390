#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

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
    ///   - stream: The stream's buffer limits; 8 MiB in memory (then the spill file) by default.
    public init(
        resumes: Bool = true, progress: TransferProgress? = nil, verify: (@Sendable (URL) async throws -> Void)? = nil,
        stream: StreamOptions = StreamOptions(bufferLimit: 8 << 20)
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
    /// `If-Range`. Resuming is byte-exact or starts over: a server that ignores the range (answers
    /// 200) or whose file changed is handled by starting over, and so is a `206` whose
    /// `Content-Range` does not start where the file ends, does not run to the end, disagrees
    /// with its `Content-Length`, or carries another validator than the one the partial file was
    /// written under. A body shorter than announced fails with
    /// ``TransportFailure/Kind/truncatedBody`` (the partial file is kept, to resume); one longer
    /// than announced, or a file whose final size disagrees with the announced total, fails and
    /// the partial file is deleted.
    ///
    /// The partial and validator files are created exclusively, readable by their owner only, and
    /// never opened through a symbolic link: a link, a special file or another user's file in
    /// their place is removed and the download starts over; a directory there fails with
    /// ``CourierError/Cause/fileFailure(_:)``.
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
        // Progress ends however the download ends, a refusal before anything is sent included.
        defer { options.progress?.finish() }
        let files = DownloadFiles(destination: destination)
        guard destination.isFileURL else {
            throw CourierError(.invalidRequest([RequestProblem(.invalidURL, "the download destination is not a file URL")]), request: request)
        }
        guard OpenFile.isDirectory(atPath: destination.deletingLastPathComponent().path) else {
            // Nothing is sent for a download that could not be written anyway.
            throw CourierError(
                .fileFailure("the destination's directory \(destination.deletingLastPathComponent().lastPathComponent.debugDescription) does not exist"),
                request: request)
        }
        var allowResume = options.resumes
        for _ in 0..<2 {
            let existing = allowResume ? try files.resumable(request: request) : nil
            var attempt = request
            if let existing {
                attempt = attempt |> header(.range, "bytes=\(existing.size)-") |> header(.ifRange, existing.validator)
            }
            let response = try await stream(attempt, options: options.stream)
            let offset: Int64
            /// How many body bytes this response announced, when it did.
            let expected: Int64?
            switch response.status {
            case 206 where existing != nil:
                guard let existing, let range = Self.continuation(of: existing, in: response) else {
                    // Not the part asked for, or of another version of the file: start over.
                    response.body.cancel()
                    allowResume = false
                    continue
                }
                offset = existing.size
                expected = range.length
            case 206:
                // A partial answer to a request that asked for no range cannot be the file.
                response.body.cancel()
                throw CourierError(
                    .transport(TransportFailure(.badResponse, message: "206 Partial Content to a request without a Range")),
                    request: request, response: response.head)
            case 200..<300:
                offset = 0
                expected = Self.identityLength(of: response)
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
            let total: Int64? = ContentRange(response.headers[.contentRange])?.total ?? expected.map { $0 + offset }
            try files.prepare(keeping: offset, validator: Self.validator(of: response), request: request)
            options.progress?.update(completed: offset, expected: total)
            let written = try await files.writeBody(
                response.body, from: offset, expected: expected, progress: options.progress, total: total, request: request)
            if let expected, written != expected {
                // Cut short without a transport error: keep what arrived, to resume.
                throw CourierError(
                    .transport(TransportFailure(.truncatedBody, message: "the body has \(written) bytes but the response announced \(expected)")),
                    request: request, response: response.head)
            }
            if let total, offset + written != total {
                files.discard()
                throw CourierError(
                    .transport(TransportFailure(.badResponse, message: "the file has \(offset + written) bytes but the response announced \(total)")),
                    request: request, response: response.head)
            }
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

    /// The part a `206` carries, when it continues the partial file byte for byte: it starts where
    /// the file ends, runs to the end of the resource (the request asked for `bytes=N-`), agrees
    /// with its own `Content-Length`, and comes with the validator the partial file was written
    /// under (a server that ignores `If-Range` must not splice a changed file).
    static func continuation(of existing: (size: Int64, validator: String), in response: StreamedResponse) -> ContentRange? {
        guard let range = ContentRange(response.headers[.contentRange]), range.start == existing.size,
            range.total.map({ range.end == $0 - 1 }) ?? true,
            identityLength(of: response).map({ $0 == range.length }) ?? true,
            validator(of: response) == existing.validator
        else { return nil }
        return range
    }

    /// The body length a response announced, when the transport hands the body over as sent
    /// (no content coding that URLSession would decode).
    static func identityLength(of response: StreamedResponse) -> Int64? {
        let coding = response.headers[.contentEncoding].map { HTTPSyntax.asciiLowercased(HTTPSyntax.trimmed($0)) }
        guard coding == nil || coding == "identity" || coding == "" else { return nil }
        return response.expectedLength
    }

    /// The response's validator for `If-Range`: a strong `ETag`, else `Last-Modified`.
    static func validator(of response: StreamedResponse) -> String? {
        // Bytes: `/` and a combining mark after it are one Character, so `W/\u{301}"x"` did not
        // start with the Character "/", and a weak tag went out as a strong validator.
        if let tag = response.headers[.eTag].map(HTTPSyntax.trimmed), !tag.utf8.starts(with: "W/".utf8), !tag.isEmpty { return tag }
        return response.headers[.lastModified]
    }
}
