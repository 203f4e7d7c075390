@_spi(Transports) import CourierCore
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends one hop with `URLSession` (FoundationNetworking on Linux): the ``Transport`` under
/// ``URLSessionExecutor``.
///
/// The transport owns its sessions and their delegates, which is how it keeps behaviour
/// identical on Linux and Apple platforms: the session never follows a redirect (the
/// ``Exchange`` does, under its ``RedirectPolicy``), and a 401 with `WWW-Authenticate` is
/// handed back as a response rather than left hanging on Linux. What is URLSession's own stays
/// here: on FoundationNetworking the body of a `3xx` it hands back is dropped.
/// The size limit, the framing check and the idle timer are the ``Exchange``'s.
///
/// The request is rendered with ``Request/urlRequest()``, so an invalid request is never handed to
/// the session. Cancelling the calling task cancels the task. The request's ``Request/timeout``
/// also becomes the `URLRequest` timeout (rounded up to whole seconds on FoundationNetworking),
/// a backstop that never fires before the exchange's own timer.
///
/// **Paths.** A hop whose body the caller reads whole (``StreamOptions/buffersBody``) goes out on
/// the buffered session, as a task whose chunks the delegate gathers (into a stream armed with
/// the exchange's rules, a size limit or a timeout, when there are any), handed over once
/// complete. Not through `URLSession.data(for:)`, whose cancellation can deadlock on
/// FoundationNetworking (see ``send(hop:options:)``). Streams, uploads from files, parts and sequences of known length
/// (spooled to a temporary file, so they go out with `Content-Length`) use a second session, made
/// on first use; a sequence of unknown length goes out chunked, while it is produced, on a
/// session of its own.
///
/// Keep one transport and reuse it: its sessions are invalidated when it is released.
public final class URLSessionTransport: Transport {
    /// The session that runs the data tasks.
    public let session: URLSession
    private let delegate: SessionDelegate
    private let configuration: URLSessionConfiguration
    /// The session streams and uploads go through, made on first use (see `SessionDelegate`).
    private let streaming = Locked<(session: URLSession, delegate: SessionDelegate)?>(nil)

    /// Creates a transport with its own sessions.
    ///
    /// The sessions keep no cookies, whatever `configuration` says: URLSession would store what
    /// each hop sets and replace a request's own `Cookie` field with its jar's, which no other
    /// transport does. Use ``CookieMiddleware`` around each hop; it works the same everywhere.
    ///
    /// On Linux the sessions run without a `URLCache`, whatever `configuration` says (the object
    /// you pass is not changed): FoundationNetworking traps the process when a task is cancelled
    /// while its cache lookup is still pending, a window no caller can see, and Courier cancels
    /// tasks on timeouts, limits and cancelled calls. There every request is loaded from the
    /// origin, whatever its ``Request/cachePolicy`` (FoundationNetworking already loaded a
    /// ``CachePolicy/returnCacheDataDontLoad`` request from the origin, cache or not). Apple
    /// platforms keep the configuration's cache.
    /// - Parameter configuration: The session configuration; `.default` when omitted.
    public init(configuration: URLSessionConfiguration = .default) {
        let configuration = Self.sessionConfiguration(configuration)
        let delegate = SessionDelegate()
        self.delegate = delegate
        self.configuration = configuration
        self.session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: DeliveryQueue())
    }

    deinit {
        session.finishTasksAndInvalidate()
        // On the queue that makes the streaming session's tasks, after any it still has to make:
        // a call cancelled before its task was made may have let the transport go, and a task
        // made on an invalidated session traps in FoundationNetworking.
        if let (session, delegate) = streaming.withLock({ $0 }) {
            delegate.calls.run { session.finishTasksAndInvalidate() }
        }
    }

    /// Refuses ``TLSOptions`` this platform's URLSession cannot honour: on Linux
    /// (FoundationNetworking) libcurl trusts only the system's CA bundle, presents no client
    /// certificate and checks no pinned key; on Apple platforms Courier does not yet answer the
    /// server-trust and client-certificate challenges. The system's roots without a client certificate pass
    /// everywhere.
    /// - Parameter tls: The options.
    /// - Throws: ``TLSOptions/Unsupported``, saying what and what to use instead.
    public static func check(_ tls: TLSOptions) throws(TLSOptions.Unsupported) {
        #if canImport(FoundationNetworking)
            let transport = "URLSession on Linux (FoundationNetworking)"
            if tls.trust != .system {
                throw TLSOptions.Unsupported(
                    transport: transport,
                    reason: "libcurl trusts only the system's CA bundle, with no way to add roots per session; "
                        + "add the authority to the system's store (update-ca-certificates) or use AsyncHTTPClientExecutor")
            }
            if tls.clientIdentity != nil {
                throw TLSOptions.Unsupported(
                    transport: transport, reason: "it cannot present a client certificate; use AsyncHTTPClientExecutor for mutual TLS")
            }
            if !tls.pinnedKeys.isEmpty {
                throw TLSOptions.Unsupported(
                    transport: transport, reason: "libcurl's key pinning is not reachable through URLSession; use NIOExecutor (CourierNIO)")
            }
        #else
            let transport = "URLSession on Apple platforms"
            if tls.trust != .system {
                throw TLSOptions.Unsupported(
                    transport: transport,
                    reason: "Courier does not yet answer server-trust challenges with other roots; add the authority to the keychain")
            }
            if tls.clientIdentity != nil {
                throw TLSOptions.Unsupported(
                    transport: transport, reason: "Courier does not yet answer client-certificate challenges")
            }
            if !tls.pinnedKeys.isEmpty {
                throw TLSOptions.Unsupported(transport: transport, reason: "Courier does not yet check pinned keys on URLSession")
            }
        #endif
    }

    /// The configuration the sessions are made with: a copy of `configuration` that keeps no
    /// cookies (Courier's ``CookieMiddleware`` is the one jar, the same on every transport), and
    /// on FoundationNetworking also no `URLCache` (see ``init(configuration:)``).
    static func sessionConfiguration(_ configuration: URLSessionConfiguration) -> URLSessionConfiguration {
        guard let copy = configuration.copy() as? URLSessionConfiguration else { return configuration }
        copy.httpShouldSetCookies = false
        copy.httpCookieAcceptPolicy = .never
        copy.httpCookieStorage = nil
        #if canImport(FoundationNetworking)
            copy.urlCache = nil
        #endif
        return copy
    }

    private var streamingSession: (session: URLSession, delegate: SessionDelegate) {
        streaming.withLock { existing in
            if let existing { return existing }
            let delegate = SessionDelegate()
            let made = (URLSession(configuration: configuration, delegate: delegate, delegateQueue: DeliveryQueue()), delegate)
            existing = made
            return made
        }
    }

    /// Sends `request`, one hop, and returns once the head arrives (a redirect's included).
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
    public func send(hop request: Request, options: StreamOptions) async throws -> StreamedResponse {
        // A body read whole is gathered by the delegate (into a stream armed with the exchange's
        // rules, when there are any) and handed over complete. Never through
        // `URLSession.data(for:)`: FoundationNetworking cancels its task from the Swift
        // cancellation handler, synchronously on the session's work queue, while the runtime
        // holds the calling task's status lock, and that work queue resumes the task (which needs
        // the lock) when the transfer ends: a call cancelled as its answer completes stopped both
        // threads, and every call after them (found by the soak: a deadline, 64 calls at once).
        // Here the task is cancelled on the session's calls queue, which holds no lock.
        let gathering = options.buffersBody && request.bodySource == nil
        return try await streamed(request, options: options, gathering: gathering)
    }

    /// Sends `request` with the body streaming through a session's delegate: the streaming
    /// session's, or the buffered session's for a body gathered under the rules.
    private func streamed(_ request: Request, options: StreamOptions, gathering: Bool) async throws -> StreamedResponse {
        var urlRequest = try request.urlRequest(attachingBodySource: false, isValid: options.hopIsValid)
        // A sequence of unknown length goes out while it is produced, chunked. One of known
        // length is written to a temporary file first and uploaded from there: FoundationNetworking
        // frames every body stream as chunked, and servers that require a length (S3's presigned
        // PUT answers 411) must get `Content-Length`.
        if case .sequence(let shot)? = request.bodySource?.storage, shot.declaredLength == nil {
            return try await streamSequence(shot, urlRequest, for: request, options: options)
        }
        var upload: (url: URL, temporary: Bool)?
        // The file a body is read from, and its length, watched until the body is sent.
        var watched: (file: URL, length: Int64)?
        if let source = request.bodySource {
            // Every body goes out from a file of Courier's own, made (and held to its length,
            // FramedBody's rule) before the first byte goes out: FoundationNetworking reads an
            // upload file to its end, whatever length it announced, so a file that grew while it
            // was sent had the bytes past that length written after the request, where a
            // keep-alive server reads them as another one (seen: 80 KiB of them).
            let file = try await source.uploadFile()
            upload = file
            if let size = try? FileManager.default.attributesOfItem(atPath: file.url.path)[.size] as? NSNumber {
                options.uploadProgress?.update(completed: 0, expected: size.int64Value)
                if urlRequest.value(forHTTPHeaderField: "Content-Length") == nil {
                    urlRequest.setValue(size.stringValue, forHTTPHeaderField: "Content-Length")
                }
                if case .file(let original) = source.storage { watched = (original, size.int64Value) }
            }
        }
        let temporaryFile = upload.flatMap { $0.temporary ? $0.url : nil }
        let cleanup: @Sendable () -> Void = {
            if let temporaryFile { try? FileManager.default.removeItem(at: temporaryFile) }
        }
        // A gathered hop goes on the buffered session: its chunks go into memory, so that
        // session's work queue is never held long.
        let (session, delegate) = gathering ? (self.session, self.delegate) : streamingSession
        do {
            let uploadFile = upload?.url
            return try await withCallback { [watched] head in
                delegate.start(
                    urlRequest, for: request, uploadFile: uploadFile, watching: watched, on: session, options: options, gathering: gathering,
                    cleanup: cleanup, head: head)
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
        let delegate = SessionDelegate()
        let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: DeliveryQueue())
        let cleanup: @Sendable () -> Void = {
            producer.cancel()
            pipe.abort()
            // After the task is made, if it still is to be (see `deinit`).
            delegate.calls.run { session.finishTasksAndInvalidate() }
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

    /// Turns a data task's completion arguments into a response or an error.
    static func result(data: Data?, response: URLResponse?, error: (any Error)?) -> Result<Response, any Error> {
        if let error { return .failure(error) }
        guard let http = response as? HTTPURLResponse else { return .failure(URLError(.badServerResponse)) }
        return .success(Response(http: http, body: data ?? Data()))
    }
}

/// Gathers a buffered hop under the exchange's rules (``StreamOptions/buffersBody`` with a size
/// limit or a timeout): one wake-up for the caller, the rules watching every chunk.
@_spi(Transports) extension URLSessionTransport: GathersUnderRules {}
