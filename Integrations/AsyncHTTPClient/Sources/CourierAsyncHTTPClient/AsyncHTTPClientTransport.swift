import AsyncHTTPClient
@_spi(Transports) import CourierCore
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// Sends one hop with AsyncHTTPClient: the ``/Courier/Transport`` under
/// ``AsyncHTTPClientExecutor``.
///
/// It keeps what is AsyncHTTPClient's own: rendering the request for it, inflating `gzip` and
/// `deflate` bodies piece by piece (so the exchange's size limit bounds memory), and mapping its
/// errors. A redirect is handed back as the response; the ``/Courier/Exchange`` follows it, and
/// holds every body to the size limit, the framing check and the idle timer. The client must
/// leave redirects, decompression and tracing to Courier
/// (``AsyncHTTPClientExecutor/clientConfiguration(_:)``).
public struct AsyncHTTPClientTransport: Transport {
    /// The client requests go through; owned by the caller.
    public let client: HTTPClient

    /// Creates a transport over `client`.
    /// - Parameter client: A client you own, made with
    ///   ``AsyncHTTPClientExecutor/clientConfiguration(_:)`` or configured the same way; you shut
    ///   it down when done.
    /// - Throws: ``AsyncHTTPClientExecutor/ConfigurationError`` when the client follows
    ///   redirects, decompresses bodies or traces requests itself.
    public init(client: HTTPClient) throws {
        let problems = ClientInspection.problems(of: client)
        guard problems.isEmpty else { throw AsyncHTTPClientExecutor.ConfigurationError(problems: problems) }
        self.client = client
    }

    /// A transport over a client this package configured itself (``AsyncHTTPClientExecutor/shared``).
    init(configuredClient client: HTTPClient) {
        self.client = client
    }

    /// Sends `request`, one hop, and returns once its head arrives (a redirect's included).
    ///
    /// With ``/Courier/StreamOptions/buffersBody`` the body is gathered here, in hand; otherwise it
    /// streams through a ``/Courier/ByteStream`` with backpressure.
    /// - Parameters:
    ///   - request: The request.
    ///   - options: How the body is delivered.
    /// - Returns: The head and the body.
    /// - Throws: ``/Courier/CourierError``.
    public func send(hop request: Request, options: StreamOptions) async throws -> StreamedResponse {
        if options.buffersBody {
            // A request with a body goes through the async API in a task the idle timer can
            // cancel: AsyncHTTPClient's delegate API fails a hop whose 3xx answer completes
            // before it has taken the body's end (a 307 to an upload), which its async API does
            // not.
            if request.body == nil, request.bodySource == nil { return try await gather(request, options: options) }
            return try await gatherWithBody(request, options: options)
        }
        let (response, head) = try await head(of: request, options: options)
        let body = BodyReader(response: response, head: head, method: request.method, request: request, timings: options.timings)
        return StreamedResponse(head: head, body: body.stream(bufferLimit: options.bufferLimit))
    }

    /// Sends `request` through AsyncHTTPClient's async API and returns its response once the
    /// head arrives, with the head in Courier's form.
    private func head(of request: Request, options: StreamOptions) async throws -> (HTTPClientResponse, Response) {
        let (prepared, url) = try Self.prepare(
            request, progress: options.uploadProgress, isValid: options.hopIsValid, loops: Array(client.eventLoopGroup.makeIterator()))
        let response: HTTPClientResponse
        do {
            response = try await client.execute(prepared, deadline: .distantFuture)
        } catch {
            throw TransportErrors.courierError(for: error, request: request)
        }
        options.rules?.noteActivity()
        if let timings = options.timings {
            // What AsyncHTTPClient tells: when the head came, the protocol, and (in the body
            // reader) when the body ended. Its connections' phases stay inside it.
            timings.mark(.firstByte)
            timings.connection(nil, protocol: response.version.major >= 2 ? "h2" : "http/1.1")
        }
        if response.history.count > 1 {
            // A client that follows redirects itself slipped past the check at init.
            let problem = AsyncHTTPClientExecutor.ConfigurationError(problems: ["follows redirects"]).description
            throw CourierError(.transport(TransportFailure(.redirectFailed, message: problem)), request: request)
        }
        return (response, Self.response(status: response.status, headers: response.headers, url: url))
    }

    /// Sends a request with a body and gathers its response whole, held to the exchange's rules,
    /// in a task of its own that the idle timer cancels (AsyncHTTPClient's async API stops only
    /// with its task).
    private func gatherWithBody(_ request: Request, options: StreamOptions) async throws -> StreamedResponse {
        let hop = Task {
            let (response, head) = try await head(of: request, options: options)
            let body = BodyReader(response: response, head: head, method: request.method, request: request, timings: options.timings)
            return StreamedResponse(head: head, body: ByteStream(try await body.collect(rules: options.rules)))
        }
        // The idle timer stops the hop; the exchange reports the timeout.
        options.rules?.watch { hop.cancel() }
        return try await withTaskCancellationHandler {
            try await hop.value
        } onCancel: {
            hop.cancel()
        }
    }

    /// Sends `request` (without a body) through AsyncHTTPClient's delegate API and gathers its
    /// response whole on the event loop, held to the exchange's rules (``GatheringDelegate``); the
    /// body is decoded once it is in hand, its decoded bytes held to the size limit.
    private func gather(_ request: Request, options: StreamOptions) async throws -> StreamedResponse {
        let (prepared, url) = try Self.prepareForDelegate(request, isValid: options.hopIsValid)
        let delegate = GatheringDelegate(rules: options.rules, timings: options.timings, url: url)
        let task = client.execute(request: prepared, delegate: delegate, deadline: nil)
        // The idle timer stops the hop; the exchange reports the timeout.
        options.rules?.watch { task.cancel() }
        let gathered: GatheredResponse
        do {
            gathered = try await withTaskCancellationHandler {
                try await task.futureResult.get()
            } onCancel: {
                task.cancel()
            }
        } catch let error as CourierError {
            // The size limit's error, made by the delegate: it names the request and keeps the head.
            throw error
        } catch {
            throw TransportErrors.courierError(for: error, request: request, duringBody: delegate.receivedHead)
        }
        if delegate.visits > 1 {
            // A client that follows redirects itself slipped past the check at init.
            let problem = AsyncHTTPClientExecutor.ConfigurationError(problems: ["follows redirects"]).description
            throw CourierError(.transport(TransportFailure(.redirectFailed, message: problem)), request: request)
        }
        options.timings?.connection(nil, protocol: gathered.head.version.major >= 2 ? "h2" : "http/1.1")
        let head = Self.response(status: gathered.head.status, headers: gathered.head.headers, url: url)
        let coding = Self.hasBody(status: head.status, method: request.method) ? gathered.head.headers.first(name: "content-encoding") : nil
        let body = try BodyReader.decode(gathered.body, contentEncoding: coding, rules: options.rules, request: request, head: head)
        return StreamedResponse(head: head, body: ByteStream(body))
    }

    /// A response head in Courier's form: the URL is parsed, and the headers converted, only if
    /// someone reads them.
    static func response(status: HTTPResponseStatus, headers: NIOHTTP1.HTTPHeaders, url: String) -> Response {
        Response(status: Int(status.code), urlString: url, field: { headers.first(name: $0.rawValue) }, headers: { Self.convert(headers) })
    }

    /// Whether a response with `status`, answering `method`, has a body to decode.
    static func hasBody(status: Int, method: CourierCore.HTTPMethod) -> Bool {
        method != .head && status != 204 && status != 304 && status >= 200
    }

    /// Response headers in Courier's form, in the order they arrived, repeats kept.
    static func convert(_ headers: NIOHTTP1.HTTPHeaders) -> CourierCore.HTTPHeaders {
        var fields: [CourierCore.HTTPHeaders.Field] = []
        fields.reserveCapacity(headers.count)
        for (name, value) in headers { fields.append(.init(name: HeaderName(rawValue: name), value: value)) }
        return CourierCore.HTTPHeaders(fields)
    }
}

/// A body read whole is gathered on AsyncHTTPClient's event loop under the exchange's rules
/// (``GatheringDelegate``): the idle timer stops the hop through its task, and the loop counts
/// the bytes against the size limit, so a request with a timeout or a size limit costs no task
/// and no stream of its own.
@_spi(Transports) extension AsyncHTTPClientTransport: GathersUnderRules {}
