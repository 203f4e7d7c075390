#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The one error Courier throws: what went wrong, with the request and response it happened to.
///
/// Switch on ``cause`` to handle a kind of failure. ``request`` is a redacted copy (see
/// ``Request/redacted()``), and ``description`` never contains a credential, so an error can be
/// logged as it is.
///
/// New causes will be added in minor releases (a circuit breaker's, a pinning failure's), so a
/// `switch` over ``cause`` outside Courier needs a `default:` (or `@unknown default:`, which also
/// warns when a release adds a case you may want to handle); the compiler asks for one. The same
/// holds for ``TransportFailure/Kind``, ``TLSProblem`` and ``RequestProblem/Kind``. For metrics
/// and logs, ``errorType`` names every cause, present and future, as a short string.
///
/// ```swift
/// do {
///     let user = try await executor.send(resource)
/// } catch let error {
///     switch error.cause {
///     case .unacceptableStatus(404, _): showNotFound()
///     case .timedOut, .transport: showOffline()
///     default: throw error
///     }
/// }
/// ```
public struct CourierError: Error, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// What went wrong. Cases are added in minor releases: match with a `default:`.
    #if hasAttribute(nonexhaustive)
        @nonexhaustive
    #endif
    public enum Cause: Sendable {
        /// The request is invalid; it was not sent. The problems say what to fix.
        ///
        /// A streamed body that breaks its declared length (``BodySource``) is found only while
        /// it is sent: its request is cut off before its end, so the server never receives it
        /// whole, and the connection is closed.
        case invalidRequest([RequestProblem])
        /// The request timed out. ``CourierError/timeout`` says which limit fired and how long it
        /// was (the idle timeout, the deadline, an attempt's, the transport's connect timeout, …).
        case timedOut
        /// The request was cancelled, by task cancellation or a cancellation handle.
        case cancelled
        /// The transport failed before a complete response arrived (DNS, connection, TLS, …).
        case transport(TransportFailure)
        /// The server answered with a status the resource does not accept. `errorBody` is the
        /// body decoded with the resource's error type, when it has one and decoding succeeded.
        case unacceptableStatus(Int, errorBody: (any Error)?)
        /// The response's `Content-Type` is not one the resource accepts.
        case unacceptableContentType(expected: [MediaType], received: MediaType?)
        /// The body could not be turned into the expected value.
        case decodingFailed(DecodingFailure)
        /// A credential could not be obtained or refreshed; the reason never contains the
        /// credential.
        case authenticationFailed(String)
        /// The response body grew past the executor's limit (counted after decompression); the
        /// transfer was stopped. ``CourierError/response`` keeps the response's status and fields
        /// (without the body), so that a success with a huge body is not taken for a failure.
        case responseTooLarge(limit: Int)
        /// An offline executor has no answer for the request: no route of an
        /// ``InMemoryExecutor`` matches it (and it has no fallback), or no entry of a
        /// ``HARReplayExecutor``'s recording does. A mistake in the test rather than a failure of
        /// the code under test; the message names the closest route or entry and how it differs.
        case unanswered(String)
        /// A recording (a HAR file) could not be read, written or understood.
        case invalidRecording(String)
        /// Pagination fetched `limit` pages and the server still named a next one.
        case tooManyPages(limit: Int)
        /// Pagination was sent back to a page it had already fetched (page `page` names an
        /// earlier page as the next one).
        case paginationCycle(page: Int)
        /// The reader of a streamed body fell so far behind the network that both the memory
        /// buffer (`bufferLimit` bytes) and the spill file (``StreamOptions/spillLimit``) were
        /// full, so the transfer was stopped rather than letting memory or disk grow
        /// (FoundationNetworking cannot pause a transfer). Read faster or raise the limits.
        case slowConsumer(bufferLimit: Int)
        /// A download's file could not be written or moved into place, or failed its
        /// ``DownloadOptions/verify`` check; the message says which.
        case fileFailure(String)
        /// The call was not sent: the ``CircuitBreaker`` for its origin is open after repeated
        /// failures (or half open with its trial calls under way). The reason says when a call
        /// may go again.
        case circuitOpen(CircuitOpen)
        /// The call was not sent: the server's rate limit for its origin (its `RateLimit` or
        /// `X-RateLimit-*` fields, or a `Retry-After` on a 429 or 503) would have kept it waiting
        /// longer than ``ServerPacing`` allows. The reason says when a call may go again.
        case rateLimited(RateLimited)
        /// A WebSocket could not be opened, or failed once open (``WebSocketFailure``); a refused
        /// upgrade has the server's response (with the start of its body) on the error.
        case webSocket(WebSocketFailure)
    }

    /// What went wrong.
    public var cause: Cause {
        get { storage.cause }
        set { unique().cause = newValue }
    }
    /// A redacted copy of the request, when the failure belongs to one.
    public var request: Request? {
        get { storage.request }
        set { unique().request = newValue }
    }
    /// The response, when one arrived. A header whose value echoes one of the request's
    /// secrets prints as `<redacted>` (read its value with the subscript).
    public var response: Response? {
        get { storage.response }
        set { unique().response = newValue }
    }
    /// The error Courier wrapped (a `URLError`, a `DecodingError`, …), for diagnostics.
    ///
    /// A `URLError` (or another error carrying a failing URL) is stored with that URL redacted
    /// as the request is: userinfo and sensitive query values hidden.
    public var underlyingError: (any Error)? {
        get { storage.underlyingError }
        set { unique().underlyingError = newValue }
    }
    /// What was measured of the hop that failed, up to the failure (the lookup, the connection,
    /// the handshake, the request written, as far as they got, and ``HopTimings/failedAt``),
    /// when the exchange recorded timings (``Exchange/recordsTimings``, or a middleware that reads
    /// them: ``HARRecorder``, CourierMetrics, CourierTracing). `nil` otherwise, and for failures
    /// that are not a hop's (a bad request, a decoding failure).
    public var timings: HopTimings? {
        get { storage.timings }
        set { unique().timings = newValue }
    }
    /// Which time limit fired, on a ``Cause/timedOut`` error that knows it (every limit of
    /// Courier's own does; a platform's timeout may not say which it was).
    public var timeout: Timeout? {
        get { storage.timeout }
        set { unique().timeout = newValue }
    }
    /// Hides the original request's secrets if a message echoes them (an error body that quotes
    /// the token it rejected, a decoder message that names a value). Never printed.
    var echoGuard: BodyRedactor? {
        get { storage.echoGuard }
        set { unique().echoGuard = newValue }
    }
    /// Whether this is the ``Cause/cancelled`` a stream gets when its reader stops reading or
    /// drops it (``ByteStream/cancel()``, a `break`, an unread body), as opposed to a cancelled
    /// task: observers report it as ``ByteStream/Ending/abandoned``, not as a failure.
    package var isReaderStop: Bool {
        get { storage.isReaderStop }
        set { unique().isReaderStop = newValue }
    }

    /// What an error holds, behind one reference: an error is one word wherever it goes (a
    /// `Result`, a typed `throws`, a stream's end), not the 700 bytes of its parts, copied each
    /// time. Copied before a change when shared, as a value is.
    private final class Storage: @unchecked Sendable {
        // Only changed through `unique()`, when no other error holds this storage.
        var cause: Cause
        var request: Request?
        var response: Response?
        var underlyingError: (any Error)?
        var timings: HopTimings?
        var timeout: Timeout?
        var echoGuard: BodyRedactor?
        var isReaderStop = false

        init(cause: Cause) { self.cause = cause }

        func copy() -> Storage {
            let copy = Storage(cause: cause)
            copy.request = request
            copy.response = response
            copy.underlyingError = underlyingError
            copy.timings = timings
            copy.timeout = timeout
            copy.echoGuard = echoGuard
            copy.isReaderStop = isReaderStop
            return copy
        }
    }

    private var storage: Storage

    /// The storage, copied first when another error shares it.
    private mutating func unique() -> Storage {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
        return storage
    }

    /// The error a stream ends with when its reader stops it or drops it.
    static var readerStop: CourierError {
        var error = CourierError(.cancelled)
        error.isReaderStop = true
        return error
    }

    /// Creates an error. The request is redacted before it is stored.
    /// - Parameters:
    ///   - cause: What went wrong.
    ///   - request: The request it happened to.
    ///   - response: The response, if one arrived.
    ///   - underlyingError: The wrapped error, if any.
    public init(
        _ cause: Cause, request: Request? = nil, response: Response? = nil,
        underlyingError: (any Error)? = nil
    ) {
        let storage = Storage(cause: cause)
        storage.echoGuard = request.map { BodyRedactor(request: $0) }
        storage.request = request?.redacted()
        // Shown with its request: a header that echoes one of the request's secrets is hidden.
        storage.response = response?.hidingEchoes(of: request)
        storage.underlyingError = underlyingError.map { Self.redacting($0, with: request?.redaction ?? .standard) }
        self.storage = storage
    }

    /// The status code, when a response arrived.
    public var status: Int? { response?.status }

    /// The decoded error body of an ``Cause/unacceptableStatus(_:errorBody:)`` failure, cast to
    /// the type the resource decodes errors into.
    /// - Parameter type: The error body type, for example `APIError.self`.
    /// - Returns: The decoded body, or `nil` when there is none of that type.
    public func errorBody<E>(as type: E.Type = E.self) -> E? {
        if case .unacceptableStatus(_, let body) = cause { return body as? E }
        return nil
    }

    /// Whether retrying the same request may succeed: timeouts, connection failures and the
    /// statuses 408, 429, 500, 502, 503 and 504.
    public var isTransient: Bool {
        switch cause {
        case .timedOut: true
        case .transport(let failure): failure.isTransient
        case .webSocket(let failure): failure.isTransient
        case .unacceptableStatus(let status, _): [408, 429, 500, 502, 503, 504].contains(status)
        default: false
        }
    }

    /// What went wrong, in one sentence, without the request; never contains a secret.
    public var summary: String {
        var text: String
        switch cause {
        case .invalidRequest(let problems):
            text = "invalid request, not sent: " + problems.map(\.message).joined(separator: "; ")
        case .timedOut:
            text = "the request timed out"
            if let timeout { text += ": \(timeout)" }
        case .cancelled:
            text = "the request was cancelled"
        case .transport(let failure):
            text = "transport failure: \(failure)"
        case .unacceptableStatus(let status, let errorBody):
            text = "unacceptable status \(status)"
            if let errorBody {
                text += " (error body: \(errorBody))"
            } else if let body = response?.body, !body.isEmpty {
                // No decoded error body (none asked for, or it did not decode): show the start.
                text += "; body starts: \(BodySnippet.make(from: body, redactor: echoGuard ?? .standard).debugDescription)"
            }
        case .unacceptableContentType(let expected, let received):
            text = "unacceptable content type \(received?.rawValue ?? "none"); expected "
                + expected.map(\.rawValue).joined(separator: " or ")
        case .decodingFailed(let failure):
            text = "decoding failed: \(failure)"
        case .authenticationFailed(let reason):
            text = "authentication failed: \(reason)"
        case .responseTooLarge(let limit):
            text = "the response body exceeded the limit of \(limit) bytes"
            if let status = response?.status { text += " (the server answered \(status); the head is kept on the error, the body is not)" }
        case .unanswered(let message):
            text = "no stubbed or recorded answer: \(message)"
        case .invalidRecording(let message):
            text = "invalid recording: \(message)"
        case .tooManyPages(let limit):
            text = "pagination stopped after \(limit) pages, the most allowed, and the server named another"
        case .paginationCycle(let page):
            text = "pagination cycle: page \(page) names an earlier page as the next one"
        case .fileFailure(let message):
            text = "download file failure: \(message)"
        case .circuitOpen(let reason):
            text = "not sent: \(reason)"
        case .rateLimited(let reason):
            text = "not sent: \(reason)"
        case .webSocket(let failure):
            text = "WebSocket: \(failure)"
            if failure.kind == .upgradeRefused, let body = response?.body, !body.isEmpty {
                text += "; body starts: \(BodySnippet.make(from: body, redactor: echoGuard ?? .standard).debugDescription)"
            }
        case .slowConsumer(let limit):
            text = "the stream's reader fell too far behind (memory buffer of \(limit) bytes and spill file full), "
                + "so the transfer was stopped; read the body faster or raise StreamOptions.bufferLimit or spillLimit"
        }
        return echoGuard?.redact(text) ?? text
    }

    /// A one-paragraph explanation with the redacted request line; never contains a secret.
    public var description: String {
        var text = summary
        if let request {
            text += " [\(request.method.rawValue) \(request.urlString(redacting: request.redaction) ?? "(no URL)")]"
        }
        return "CourierError: " + text
    }

    /// The same as ``description``.
    public var debugDescription: String { description }
}

/// Why the transport failed, in terms independent of the platform's error types.
public struct TransportFailure: Sendable, Hashable, CustomStringConvertible {
    /// The broad kind of failure. Kinds are added in minor releases: match with a `default:`.
    #if hasAttribute(nonexhaustive)
        @nonexhaustive
    #endif
    public enum Kind: Sendable, Hashable {
        /// The host name could not be resolved.
        case dnsFailure
        /// The connection could not be made or was refused.
        case cannotConnect
        /// The connection was lost mid-exchange.
        case connectionLost
        /// There is no network.
        case notConnected
        /// TLS negotiation or certificate validation failed.
        case secureConnectionFailed
        /// Too many redirects, or a redirect that could not be followed.
        case redirectFailed
        /// The response was malformed or could not be read, or a compressed body could not be
        /// decoded.
        case badResponse
        /// The body ended before all the bytes its framing announced arrived (a connection cut
        /// mid-body). Transient: an idempotent request may be retried.
        case truncatedBody
        /// Anything else.
        case other
    }

    /// The broad kind of failure.
    public var kind: Kind
    /// The platform's error code (`URLError.Code.rawValue`), when there was one.
    public var code: Int?
    /// A short explanation without URLs or secrets.
    public var message: String
    /// What failed, for a ``Kind/secureConnectionFailed`` failure whose transport could tell.
    public var tlsProblem: TLSProblem?
    /// For a ``Kind/connectionLost`` failure: whether the lost connection had carried an earlier
    /// hop (kept alive, or shared), or was opened for this one; `nil` when the transport cannot
    /// tell. The ``Exchange`` sends a hop lost before any answer once more unless this is `false`:
    /// a server that closes an idle connection as it is reused is the case the resend is for, and
    /// an origin that resets every new connection is not made to take each attempt twice.
    public var connectionWasReused: Bool?
    /// For a ``Kind/connectionLost`` failure: `true` when the server said it did not process the
    /// request (an HTTP/2 `REFUSED_STREAM`, or a stream a `GOAWAY` left out: RFC 9113 §8.7), so
    /// it may be sent again whatever its method; `nil` when nothing said so. The ``Exchange``
    /// sends such a hop once more on another connection unless its body cannot be read again or
    /// the request says ``Request/allowsRetry`` `false`.
    public var requestWasNotProcessed: Bool?

    /// A ``Kind/secureConnectionFailed`` failure for `problem`, worded by it.
    /// - Parameters:
    ///   - problem: What failed.
    ///   - code: The platform's error code, when there was one.
    /// - Returns: The failure.
    public static func tls(_ problem: TLSProblem, code: Int? = nil) -> TransportFailure {
        var failure = TransportFailure(.secureConnectionFailed, code: code, message: problem.description)
        failure.tlsProblem = problem
        return failure
    }

    /// Creates a transport failure.
    /// - Parameters:
    ///   - kind: The broad kind.
    ///   - code: The platform's error code.
    ///   - message: A short explanation; must not contain secrets.
    public init(_ kind: Kind, code: Int? = nil, message: String) {
        self.kind = kind
        self.code = code
        self.message = message
    }

    /// Whether a retry may succeed (lost connections, refused connections, no network, DNS,
    /// truncated bodies).
    public var isTransient: Bool {
        switch kind {
        case .cannotConnect, .connectionLost, .notConnected, .dnsFailure, .truncatedBody: true
        default: false
        }
    }

    /// The message and code.
    public var description: String {
        code.map { "\(message) (code \($0))" } ?? message
    }
}

extension CourierError {
    /// The kind of failure as a short, fixed name without any value from the request or the
    /// response: what metrics, traces and structured logs record as `error.type` (OpenTelemetry's
    /// low-cardinality error type). A transport failure is named by its kind (`connectionLost`,
    /// `truncatedBody`, …), everything else by its cause (`timedOut`, `cancelled`,
    /// `unacceptableStatus`, `decodingFailed`, …).
    public var errorType: String {
        switch cause {
        case .invalidRequest: "invalidRequest"
        case .timedOut: "timedOut"
        case .cancelled: "cancelled"
        case .transport(let failure):
            switch failure.kind {
            case .dnsFailure: "dnsFailure"
            case .cannotConnect: "cannotConnect"
            case .connectionLost: "connectionLost"
            case .notConnected: "notConnected"
            case .secureConnectionFailed: "secureConnectionFailed"
            case .redirectFailed: "redirectFailed"
            case .badResponse: "badResponse"
            case .truncatedBody: "truncatedBody"
            case .other: "transportFailure"
            }
        case .unacceptableStatus: "unacceptableStatus"
        case .unacceptableContentType: "unacceptableContentType"
        case .decodingFailed: "decodingFailed"
        case .authenticationFailed: "authenticationFailed"
        case .responseTooLarge: "responseTooLarge"
        case .unanswered: "unanswered"
        case .invalidRecording: "invalidRecording"
        case .tooManyPages: "tooManyPages"
        case .paginationCycle: "paginationCycle"
        case .slowConsumer: "slowConsumer"
        case .fileFailure: "fileFailure"
        case .circuitOpen: "circuitOpen"
        case .rateLimited: "rateLimited"
        case .webSocket(let failure): "webSocket.\(failure.kind)"
        }
    }
}
