#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A response head (status, headers, URL) with its body: in hand, or still arriving.
///
/// Every ``Executor`` returns one: ``Executor/stream(_:options:)`` hands it over as soon as the
/// head is in, and ``Executor/send(_:)-(Request)`` reads its body into a ``Response``. Whatever
/// the status: check it (or call ``validated(_:)``) before reading.
public struct StreamedResponse: Sendable {
    /// Status, headers and URL, with an empty body (headers Foundation delivered stay unconverted
    /// until read).
    private var metadata: Response
    /// The body, in chunks.
    public var body: ByteStream
    /// The request this answers, when ``Executor/stream(_:options:)`` made it: errors built from
    /// this response hide that request's secrets (a server that reflects a token in an error
    /// page cannot put it in an error's description).
    var request: Request?
    /// Where the transport recorded this hop's timings, when something reads them.
    var recorder: HopTimings.Recorder?

    /// Where the time of the hop that brought this response went (connection, handshake, time to
    /// first byte, ...), as far as its transport reports it; `nil` unless the exchange recorded
    /// it (``Exchange/recordsTimings``, or a ``HopTimingsObserver`` middleware). Read after the
    /// body ended, it includes ``HopTimings/bodyEnded``.
    public var timings: HopTimings? { recorder?.timings }

    /// The status code.
    public var status: Int {
        get { metadata.status }
        set { metadata.status = newValue }
    }
    /// The header fields.
    public var headers: HTTPHeaders {
        get { metadata.headers }
        set { metadata.headers = newValue }
    }
    /// The URL of the response, after redirects.
    public var url: URL? {
        get { metadata.url }
        set { metadata.url = newValue }
    }

    /// Creates a streamed response.
    /// - Parameters:
    ///   - status: The status code.
    ///   - headers: The header fields.
    ///   - url: The URL of the response.
    ///   - body: The body.
    public init(status: Int, headers: HTTPHeaders = HTTPHeaders(), url: URL? = nil, body: ByteStream) {
        self.metadata = Response(status: status, headers: headers, url: url)
        self.body = body
    }

    /// A response head with a body.
    /// - Parameters:
    ///   - head: The status, headers and URL; its body is ignored.
    ///   - body: The body.
    public init(head: Response, body: ByteStream) {
        var metadata = head
        metadata.body = Data()
        self.metadata = metadata
        self.body = body
    }

    /// A buffered response in this form: its body in hand.
    /// - Parameter response: The response.
    public init(_ response: Response) {
        self.init(head: response, body: ByteStream(response.body))
    }

    /// The status, headers and URL as a ``Response`` with an empty body.
    public var head: Response { metadata }

    /// Whether the status is in the 2xx range.
    public var isSuccess: Bool { (200..<300).contains(status) }

    /// The `Content-Type` header parsed as a media type, if present.
    public var contentType: MediaType? { headers[.contentType].map(MediaType.init(rawValue:)) }

    /// The expected body length from `Content-Length`, when the server sent a valid one
    /// (``Response/contentLength(_:)``).
    public var expectedLength: Int64? {
        metadata.declaredContentLength.map(Int64.init)
    }

    /// Reads the whole body into a ``Response``, refusing more than `limit` bytes.
    /// - Parameter limit: The most body bytes to accept; 16 MiB by default.
    /// - Returns: The buffered response.
    /// - Throws: ``CourierError/Cause/responseTooLarge(limit:)`` or the stream's error.
    public func collect(upTo limit: Int = 16 << 20) async throws(CourierError) -> Response {
        do {
            var response = metadata
            response.body = try await body.collect(upTo: limit)
            return response
        } catch {
            throw error.request == nil && request != nil ? CourierError(error.cause, request: request, response: error.response, underlyingError: error.underlyingError) : error
        }
    }

    /// This response when `accept` says its status is acceptable (2xx by default); otherwise the
    /// transfer is stopped and ``CourierError/Cause/unacceptableStatus(_:errorBody:)`` thrown,
    /// with the start of the body (up to 64 KiB) in the error's response.
    /// - Parameter accept: The statuses to accept.
    /// - Returns: This response.
    /// - Throws: ``CourierError``.
    public func validated(_ accept: some RangeExpression<Int> & Sendable = 200..<300) async throws(CourierError) -> StreamedResponse {
        try await validated(accept) { _ in nil }
    }

    /// This response when `accept` says its status is acceptable (2xx by default); otherwise the
    /// transfer is stopped and ``CourierError/Cause/unacceptableStatus(_:errorBody:)`` thrown with
    /// the start of the body (up to 64 KiB) decoded as JSON into `error`, read with
    /// ``CourierError/errorBody(as:)``; as `decode(_:error:)` does for a buffered
    /// resource. A body that does not decode leaves the error body `nil`.
    ///
    /// ```swift
    /// let response = try await executor.stream(chat).validated(error: APIError.self)
    /// // on a 401: catch let error as CourierError, then error.errorBody(as: APIError.self)?.message
    /// ```
    /// - Parameters:
    ///   - accept: The statuses to accept.
    ///   - error: The type of the server's error bodies.
    ///   - decoder: The JSON decoder.
    /// - Returns: This response.
    /// - Throws: ``CourierError``.
    public func validated<Failure: Decodable & Error>(
        _ accept: some RangeExpression<Int> & Sendable = 200..<300, error: Failure.Type, decoder: JSONDecoder = JSONDecoder()
    ) async throws(CourierError) -> StreamedResponse {
        try await validated(accept) { body in
            let failure: Failure? = try? decoder.decode(Failure.self, from: body)
            return failure
        }
    }

    private func validated(
        _ accept: some RangeExpression<Int> & Sendable, errorBody: (Data) -> (any Error)?
    ) async throws(CourierError) -> StreamedResponse {
        guard accept.contains(status) else {
            var start = Data()
            var iterator = body.makeAsyncIterator()
            while start.count < 64 << 10, let chunk = try? await iterator.next() { start.append(chunk.prefix((64 << 10) - start.count)) }
            body.cancel()
            throw CourierError(
                .unacceptableStatus(status, errorBody: errorBody(start)), request: request,
                response: Response(status: status, headers: headers, body: start, url: url))
        }
        return self
    }
}

/// How a response body is delivered: buffered or streamed, within which limits, reporting what.
public struct StreamOptions: Sendable {
    /// The most bytes that may wait between the network and the reader; see
    /// ``CourierError/Cause/slowConsumer(bufferLimit:)``. ``ByteStream/defaultBufferLimit`` by default.
    public var bufferLimit: Int
    /// The most bytes written to a temporary file when the reader falls more than
    /// ``bufferLimit`` behind the network (FoundationNetworking cannot pause a transfer, so the
    /// bytes must go somewhere): memory stays bounded and a slow reader still gets every byte.
    /// Past this, the stream ends with ``CourierError/Cause/slowConsumer(bufferLimit:)``; `0`
    /// ends it as soon as the memory buffer is full. 1 GiB by default. The file is unlinked as
    /// soon as it is open, emptied whenever the reader catches up and dropped (with everything
    /// still buffered) the moment the stream stops. All streams together also stay under
    /// ``processSpillLimit``.
    public var spillLimit: Int64
    /// Receives upload progress (bytes sent) as the request body goes out; download progress is
    /// counted by whoever reads the body (``Executor/download(_:to:options:)`` does).
    ///
    /// A transport only updates it; ``Executor/stream(_:options:)`` finishes it however the call
    /// ends (the head arrived, a failure before it, cancellation, the deadline), so a reader of
    /// its ``TransferProgress/updates`` always sees the end, on every transport.
    public var uploadProgress: TransferProgress?
    /// Whether the caller reads the whole body into memory (``Executor/send(_:)-(Request)`` sets
    /// this): a transport that gathers a body faster than it streams one may then hand it over in
    /// hand (``ByteStream/bufferedData``). Limits still apply. `false` by default.
    public var buffersBody = false
    /// The exchange's rules for a body gathered whole by a transport that applies them as the
    /// bytes arrive (``GathersUnderRules``); `nil` otherwise.
    @_spi(Transports) public var rules: BodyRules?
    /// Whether this hop's request is known to be valid: the exchange sets it, having validated
    /// the hop itself or knowing it is the request the executor's front door validated,
    /// unchanged. A transport that sees it renders the URL with
    /// ``Request/renderedURLString()`` and validates nothing again (one validation per hop,
    /// in the core); one that does not look validates as before.
    @_spi(Transports) public var hopIsValid = false
    /// Set by the executor's front door (``Executor/send(_:)-(Request)``,
    /// ``Executor/stream(_:options:)``) once it validated the call's request.
    package var callIsValid = false

    /// These options, for a call the front door validated.
    package var validated: StreamOptions {
        var options = self
        options.callIsValid = true
        return options
    }
    /// Where the transport records the phases of this hop (``HopTimings``): set by the exchange
    /// when something reads them, `nil` otherwise. A transport records what it sees and leaves
    /// the rest: the exchange marks the head and a body in hand itself.
    public var timings: HopTimings.Recorder?
    /// The protocol the call asks to switch its connection to (a WebSocket's handshake), or
    /// `nil` for a plain HTTP call: only a transport that ``UpgradesConnections`` honours it.
    public var upgrade: HTTPUpgrade?

    /// The options ``Executor/send(_:)-(Request)`` uses: the body read whole.
    public static var buffered: StreamOptions {
        var options = StreamOptions()
        options.buffersBody = true
        return options
    }

    /// Creates options.
    /// - Parameters:
    ///   - bufferLimit: The most bytes that may wait unread in memory.
    ///   - uploadProgress: Receives upload progress.
    ///   - spillLimit: The most bytes spilled to a temporary file when the reader lags.
    public init(
        bufferLimit: Int = ByteStream.defaultBufferLimit, spillLimit: Int64 = 1 << 30, uploadProgress: TransferProgress? = nil
    ) {
        self.bufferLimit = max(1, bufferLimit)
        self.spillLimit = max(0, spillLimit)
        self.uploadProgress = uploadProgress
    }

    /// The most bytes all the streams of the process together may spill to disk (see
    /// ``spillLimit``); 4 GiB by default. A stream whose reader falls behind when the ceiling is
    /// reached ends with ``CourierError/Cause/slowConsumer(bufferLimit:)``, as at its own limit.
    /// Negative values count as `0` (no spilling at all).
    ///
    /// ```swift
    /// StreamOptions.processSpillLimit = 512 << 20  // at most 512 MiB on disk, whatever runs
    /// ```
    public static var processSpillLimit: Int64 {
        get { SpillBudget.shared.limit }
        set { SpillBudget.shared.limit = newValue }
    }
}
