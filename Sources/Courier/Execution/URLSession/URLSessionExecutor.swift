import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends requests with `URLSession` (FoundationNetworking on Linux), the same way on every
/// platform.
///
/// The executor owns its session and the session's delegate, which is how it keeps behaviour
/// identical on Linux and Apple platforms: redirects follow a ``RedirectPolicy`` (credentials are
/// dropped when a redirect leaves the request's origin, at most 20 hops, `http`/`https` only), a
/// response body can be capped, and a 401 with `WWW-Authenticate` is handed back as a response
/// rather than left hanging on Linux.
///
/// Configure the session (timeouts, caches, cookies, proxies, `protocolClasses` for tests)
/// through the `URLSessionConfiguration` you pass. Keep one executor and reuse it: each owns a
/// session, invalidated when the executor is released. To send through a session you made
/// yourself, with its own delegate, use ``CallbackExecutor/dataTask(session:)``.
///
/// The request is rendered with ``Request/urlRequest()``, so an invalid request is never handed to
/// the session. Cancelling the calling task cancels the data task. The request's
/// ``Request/timeout`` becomes the `URLRequest` timeout.
///
/// **Two paths.** Without a ``maximumResponseSize`` (and without a sub-second timeout), requests
/// go through `URLSession.data(for:)`, as fast as hand-written code: the session's delegate only
/// answers redirects ("do not follow": Courier follows them itself under the ``RedirectPolicy``)
/// and authentication challenges. On FoundationNetworking a `401` carrying a `WWW-Authenticate`
/// challenge comes back on that path without its body; with a size limit, requests go through the
/// delegate, which counts the body as it arrives and keeps that body. Streams
/// (``Executor/stream(_:options:)``) use a session of their own.
///
/// ```swift
/// let executor = URLSessionExecutor()
/// let user = try await executor.send(.get |> url("https://api.example.com/me") |> decode(User.self))
/// ```
public final class URLSessionExecutor: Executor {
    /// The session that runs the data tasks.
    public let session: URLSession
    private let delegate: SessionDelegate
    private let configuration: URLSessionConfiguration
    /// The session streams and uploads go through, made on first use (see
    /// `StreamingSessionDelegate`).
    private let streaming = Locked<(session: URLSession, delegate: StreamingSessionDelegate)?>(nil)

    /// A shared executor with the default configuration.
    public static let shared = URLSessionExecutor()

    /// How redirects are followed.
    public var redirects: RedirectPolicy { delegate.redirects }
    /// The most bytes a response body may have (after decompression), or `nil` for no limit.
    public var maximumResponseSize: Int? { delegate.maximumResponseSize }

    /// Creates an executor with its own session.
    /// - Parameters:
    ///   - configuration: The session configuration; `.default` when omitted.
    ///   - redirects: How redirects are followed; ``RedirectPolicy/follow`` by default.
    ///   - maximumResponseSize: The most bytes a response body may have, counted after
    ///     decompression, error and redirect bodies included; a larger one stops the transfer with
    ///     ``CourierError/Cause/responseTooLarge(limit:)``. `nil` (the default) sets no limit.
    public init(
        configuration: URLSessionConfiguration = .default, redirects: RedirectPolicy = .follow,
        maximumResponseSize: Int? = nil
    ) {
        let delegate = SessionDelegate(redirects: redirects, maximumResponseSize: maximumResponseSize)
        self.delegate = delegate
        self.configuration = configuration
        self.session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: DeliveryQueue())
    }

    deinit {
        session.finishTasksAndInvalidate()
        streaming.withLock { $0?.session.finishTasksAndInvalidate() }
    }

    private var streamingSession: (session: URLSession, delegate: StreamingSessionDelegate) {
        streaming.withLock { existing in
            if let existing { return existing }
            let delegate = StreamingSessionDelegate(redirects: delegate.redirects, maximumResponseSize: delegate.maximumResponseSize)
            let made = (URLSession(configuration: configuration, delegate: delegate, delegateQueue: DeliveryQueue()), delegate)
            existing = made
            return made
        }
    }

    /// Sends `request` and returns once the head arrives.
    ///
    /// When ``StreamOptions/buffersBody`` is set and the request has no ``Request/bodySource``,
    /// the body is gathered by the session and handed over in hand; otherwise it streams in
    /// bounded memory, and a ``Request/bodySource`` is uploaded from a file (a temporary one for
    /// parts and sequences), reporting to ``StreamOptions/uploadProgress``.
    /// - Parameters:
    ///   - request: The request.
    ///   - options: How the body is delivered.
    /// - Returns: The head and the body.
    /// - Throws: ``CourierError`` for an invalid request, `URLError` from the session, or
    ///   `CancellationError`.
    public func execute(_ request: Request, options: StreamOptions) async throws -> StreamedResponse {
        if options.buffersBody && request.bodySource == nil {
            return StreamedResponse(try await buffered(request))
        }
        return try await streamed(request, options: options)
    }

    /// Sends `request` with the body streaming through the streaming session's delegate.
    private func streamed(_ request: Request, options: StreamOptions) async throws -> StreamedResponse {
        var urlRequest = try request.urlRequest(attachingBodySource: false)
        // A sequence of unknown length goes out while it is produced, chunked. One of known
        // length is written to a temporary file first and uploaded from there: FoundationNetworking
        // frames every body stream as chunked, and servers that require a length (S3's presigned
        // PUT answers 411) must get `Content-Length`.
        if case .sequence(let shot)? = request.bodySource?.storage, shot.declaredLength == nil {
            return try await streamSequence(shot, urlRequest, for: request, options: options)
        }
        var upload: (url: URL, temporary: Bool)?
        if let source = request.bodySource {
            let file = try await source.uploadFile()
            upload = file
            if let size = try? FileManager.default.attributesOfItem(atPath: file.url.path)[.size] as? NSNumber {
                options.uploadProgress?.update(completed: 0, expected: size.int64Value)
                if urlRequest.value(forHTTPHeaderField: "Content-Length") == nil {
                    urlRequest.setValue(size.stringValue, forHTTPHeaderField: "Content-Length")
                }
            }
        }
        let temporaryFile = upload.flatMap { $0.temporary ? $0.url : nil }
        let cleanup: @Sendable () -> Void = {
            if let temporaryFile { try? FileManager.default.removeItem(at: temporaryFile) }
        }
        let (session, delegate) = streamingSession
        do {
            let uploadFile = upload?.url
            return try await withCallback { head in
                delegate.start(
                    urlRequest, for: request, uploadFile: uploadFile, on: session, options: options, cleanup: cleanup, head: head)
            }
        } catch {
            cleanup()
            throw error
        }
    }

    /// Sends a one-shot byte sequence of unknown length as the body while it is produced: a
    /// `BodyPipe` read by a session of its own (its blocking reads hold up no other transfer),
    /// with chunked transfer coding.
    private func streamSequence(
        _ shot: BodySource.OneShot, _ prepared: URLRequest, for request: Request, options: StreamOptions
    ) async throws -> StreamedResponse {
        guard let chunks = shot.take() else { throw BodySource.alreadyUsed }
        var urlRequest = prepared
        let stream = BodyPipe()
        let pipe = stream.buffer
        urlRequest.httpBodyStream = stream
        // Always chunked: FoundationNetworking (libcurl) sends a body stream with chunked transfer
        // coding whatever the headers say, and a Content-Length beside it would frame the body
        // twice (RFC 9112 §6.3 forbids it; proxies may read it either way). A declared length is
        // enforced by the producer below instead.
        urlRequest.setValue(nil, forHTTPHeaderField: "Content-Length")
        let declared = shot.declaredLength
        let producer = Task {
            var written: Int64 = 0
            do {
                for try await chunk in chunks {
                    written += Int64(chunk.count)
                    if let declared, written > declared { break }
                    guard await pipe.write(chunk) else { return }
                }
                // A body that disagrees with its declared length must not look complete.
                pipe.finish(failed: declared.map { $0 != written } ?? false)
            } catch {
                pipe.finish(failed: true)
            }
        }
        let delegate = StreamingSessionDelegate(redirects: redirects, maximumResponseSize: maximumResponseSize)
        let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: DeliveryQueue())
        let cleanup: @Sendable () -> Void = {
            producer.cancel()
            pipe.abort()
            session.finishTasksAndInvalidate()
        }
        do {
            return try await withCallback { head in
                delegate.start(
                    urlRequest, for: request, uploadFile: nil, bodyPipe: pipe, on: session, options: options, cleanup: cleanup,
                    head: head)
            }
        } catch {
            cleanup()
            throw error
        }
    }

    /// Sends `request` (which has no body source) with a data task, the body gathered by the
    /// session.
    private func buffered(_ request: Request) async throws -> Response {
        let urlRequest = try request.urlRequest()
        let session = self.session
        let delegate = self.delegate
        // The body is needed chunk by chunk only for a size limit or a sub-second idle timeout;
        // otherwise `data(for:)`, whose completion FoundationNetworking delivers inline.
        if delegate.maximumResponseSize == nil && !request.needsExactTimeoutWatchdog {
            return try await Self.fetch(urlRequest, for: request, on: session, delegate: delegate)
        }
        return try await withCallback { complete in
            delegate.start(urlRequest, for: request, on: session, complete: complete)
        }
    }

    /// Sends `urlRequest` with `data(for:)`, following redirects by hand under the policy (the
    /// session delegate answers every redirect with "do not follow", so the 3xx comes back here
    /// and the policy decides on its raw `Location`), and turning a challenged 401 (which
    /// FoundationNetworking would leave hanging) back into a response. Such a 401 arrives without
    /// its body on this path.
    private static func fetch(
        _ urlRequest: URLRequest, for request: Request, on session: URLSession, delegate: SessionDelegate
    ) async throws -> Response {
        var current = urlRequest
        var chain: RedirectPolicy.Chain?
        while true {
            let data: Data
            let response: URLResponse
            do {
                (data, response) = try await session.data(for: current)
            } catch let error as URLError where error.code == .cancelled && !Task.isCancelled {
                guard let challenged = delegate.takeChallenged(current) else { throw error }
                return Response(http: challenged, body: Data())
            }
            guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
            let status = http.statusCode
            if delegate.redirects.follows, status == 301 || status == 302 || status == 303 || status == 307 || status == 308,
                let location = http.value(forHTTPHeaderField: "Location")
            {
                var state = chain ?? RedirectPolicy.Chain(request)
                let decision = delegate.redirects.hop(status: status, location: location, chain: &state)
                chain = state
                switch decision {
                case .follow(let next):
                    current = next
                    continue
                case .fail(let failure):
                    throw CourierError(.transport(failure))
                case .deliver:
                    break
                }
            }
            let converted = Response(http: http, body: data)
            if let failure = converted.framingFailure(method: current.httpMethod) { throw CourierError(.transport(failure)) }
            return converted
        }
    }

    /// Turns a data task's completion arguments into a response or an error.
    /// - Parameters:
    ///   - data: The body, if any.
    ///   - response: The URL response, if any.
    ///   - error: The error, if any.
    /// - Returns: The response, or the error (`URLError(.badServerResponse)` for a non-HTTP one).
    public static func result(data: Data?, response: URLResponse?, error: (any Error)?) -> Result<Response, any Error> {
        if let error { return .failure(error) }
        guard let http = response as? HTTPURLResponse else { return .failure(URLError(.badServerResponse)) }
        return .success(Response(http: http, body: data ?? Data()))
    }
}
