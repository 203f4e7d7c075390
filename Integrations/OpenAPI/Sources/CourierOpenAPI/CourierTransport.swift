import CourierCore
import CourierHTTPTypes
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import HTTPTypes
import OpenAPIRuntime

/// A swift-openapi-runtime `ClientTransport` over any Courier ``/Courier/Executor``: a generated
/// OpenAPI client gets Courier's middleware (retry, auth refresh, logging with redaction, limits,
/// HAR record and replay), its redirect rules and size limits, and its in-memory executor for
/// tests.
///
/// ```swift
/// let executor = URLSessionExecutor().with(RetryMiddleware(), LoggingMiddleware(logger: logger))
/// let client = Client(serverURL: try Servers.Server1.url(), transport: CourierTransport(executor))
/// let user = try await client.getUser(path: .init(id: 42)).ok.body.json
/// ```
///
/// - The request's path arrives percent-encoded from the generated code and is sent exactly as
///   it is (never encoded twice); header fields keep their order and repeats.
/// - The operation ID becomes the request's ``/Courier/Request/operationID``, which logging and
///   tracing middleware record.
/// - Bodies stream both ways. A request body of known length that can be iterated again (what
///   the generated code makes for JSON and forms) is gathered, up to ``repeatableBodyLimit``
///   bytes, so retry middleware may send it again; any other body (unknown length, single
///   iteration, or larger) streams as it is produced, never buffered, and is not retried; its
///   known length goes out as `Content-Length` on every transport. The response body is handed
///   over as it arrives; an empty one (`204`, `304`, a `HEAD`, `Content-Length: 0`) is `nil`,
///   and one the generated code drops unread counts as left unread, not as a failure, in
///   Courier's logs and metrics.
/// - Retries: a generated `GET`, `PUT` or `DELETE` is retried by `RetryMiddleware` (idempotent
///   methods); a `POST` or `PATCH` never is, unless its operation ID is in
///   ``retryableOperations`` (for operations the server makes safe to repeat, say with an
///   idempotency key), and only while its body can be sent again (see ``repeatableBodyLimit``).
/// - Errors are Courier's (``/Courier/CourierError``); the generated client wraps them in its
///   `ClientError`, whose description shows the request it built, never a credential a Courier
///   middleware added afterwards.
public struct CourierTransport: ClientTransport {
    /// The executor requests go through, with its middleware.
    public var executor: any Executor
    /// The largest request body gathered into memory so that it can be sent again; 4 MiB by
    /// default.
    public var repeatableBodyLimit: Int
    /// How response bodies are delivered (buffer limit).
    public var streamOptions: StreamOptions
    /// The operation IDs (the document's `operationId`s, as in the generated client's
    /// `Operations` namespace) that retry middleware may send again whatever their method: a
    /// `POST` or `PATCH` is retried only if it is named here. Empty by default.
    public var retryableOperations: Set<String>

    /// Creates a transport.
    /// - Parameters:
    ///   - executor: The executor, with any middleware.
    ///   - repeatableBodyLimit: The largest request body gathered so it can be retried.
    ///   - streamOptions: How response bodies are delivered.
    ///   - retryableOperations: Operation IDs that retry middleware may send again even when their
    ///     method is not idempotent (a `POST` the server deduplicates, say).
    public init(
        _ executor: any Executor, repeatableBodyLimit: Int = 4 << 20, streamOptions: StreamOptions = StreamOptions(),
        retryableOperations: Set<String> = []
    ) {
        self.executor = executor
        self.repeatableBodyLimit = max(0, repeatableBodyLimit)
        self.streamOptions = streamOptions
        self.retryableOperations = retryableOperations
    }

    /// Sends a request the generated client made.
    /// - Parameters:
    ///   - request: The request head; its path is already percent-encoded.
    ///   - body: The request body, if any.
    ///   - baseURL: The server URL.
    ///   - operationID: The OpenAPI operation.
    /// - Returns: The response head and its body (`nil` for a response that can have none).
    /// - Throws: ``/Courier/CourierError``.
    public func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
        var courierRequest = try await Self.request(
            from: request, body: body, baseURL: baseURL, operationID: operationID, repeatableBodyLimit: repeatableBodyLimit)
        if retryableOperations.contains(operationID) { courierRequest = courierRequest |> retryable() }
        let response = try await executor.stream(courierRequest, options: streamOptions)
        let head = try response.head.httpResponse()
        // A body that is complete with the head (a HEAD, 204, 304, Content-Length: 0) arrives in
        // hand: Courier settled it, so it is never handed over as a stream left unread. Only a
        // response that can have no body (to a HEAD, 1xx, 204, 304: RFC 9110 §6.4.1) gets none;
        // `Content-Length: 0` is an empty body, which an operation declaring one must receive.
        if let data = response.body.bufferedData {
            let status = head.status.code
            let hasNoBody = request.method == .head || (100..<200).contains(status) || status == 204 || status == 304
            return (head, hasNoBody && data.isEmpty ? nil : HTTPBody(data))
        }
        let length: HTTPBody.Length = response.expectedLength.map { .known($0) } ?? .unknown
        return (head, HTTPBody(response.body, length: length, iterationBehavior: .single))
    }

    /// The Courier request for a generated client's request.
    static func request(
        from request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String, repeatableBodyLimit: Int
    ) async throws -> Request {
        guard let path = request.path else {
            throw CourierError(.invalidRequest([RequestProblem(.missingURL, "the generated request has no path")]))
        }
        // The server URL's own path, then the operation's path, already encoded.
        var base = baseURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        var made = Request(method: HTTPMethod(rawValue: request.method.rawValue)) |> url(base + (path.hasPrefix("/") ? path : "/" + path))
        made.headers = CourierCore.HTTPHeaders(httpFields: request.headerFields)
        made.operationID = operationID
        if let body {
            if case .known(let length) = body.length, body.iterationBehavior == .multiple, length <= Int64(repeatableBodyLimit) {
                let data = try await Data(collecting: body, upTo: Int(length))
                // The generated code frames the body; Courier's own check wants the two to agree.
                made.body = data
            } else {
                let known: Int64? = if case .known(let length) = body.length { length } else { nil }
                made = made |> upload(body.map { Data($0) }, length: known)
                if let type = request.headerFields[.contentType] { made.headers.set(.contentType, type) }
            }
        }
        try made.validate()
        return made
    }
}
