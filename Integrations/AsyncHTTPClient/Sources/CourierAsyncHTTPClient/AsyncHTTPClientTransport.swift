import AsyncHTTPClient
import Courier
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// Sends one hop with AsyncHTTPClient: the ``Courier/Transport`` under
/// ``AsyncHTTPClientExecutor``.
///
/// It keeps what is AsyncHTTPClient's own: rendering the request for it, inflating `gzip` and
/// `deflate` bodies piece by piece (so the size limit bounds memory), the per-request idle
/// timer, and mapping its errors. A redirect is handed back as the response; the
/// ``Courier/Exchange`` follows it. The client must leave redirects, decompression and tracing
/// to Courier (``AsyncHTTPClientExecutor/clientConfiguration(_:)``).
public struct AsyncHTTPClientTransport: Transport {
    /// The client requests go through; owned by the caller.
    public let client: HTTPClient
    /// The most bytes a response body may have, counted after decompression, or `nil` for no
    /// limit (negative values count as `0`).
    public var maximumResponseSize: Int? {
        get { sizeLimit }
        set { sizeLimit = newValue.map { max(0, $0) } }
    }
    private var sizeLimit: Int?

    /// Creates a transport over `client`.
    /// - Parameters:
    ///   - client: A client you own, made with ``AsyncHTTPClientExecutor/clientConfiguration(_:)``
    ///     or configured the same way; you shut it down when done.
    ///   - maximumResponseSize: The most bytes a response body may have, counted after
    ///     decompression; `nil` (the default) sets no limit.
    /// - Throws: ``AsyncHTTPClientExecutor/ConfigurationError`` when the client follows
    ///   redirects, decompresses bodies or traces requests itself.
    public init(client: HTTPClient, maximumResponseSize: Int? = nil) throws {
        let problems = ClientInspection.problems(of: client)
        guard problems.isEmpty else { throw AsyncHTTPClientExecutor.ConfigurationError(problems: problems) }
        self.client = client
        self.sizeLimit = maximumResponseSize.map { max(0, $0) }
    }

    /// Sends `request`, one hop, and returns once its head arrives (a redirect's included).
    ///
    /// With ``Courier/StreamOptions/buffersBody`` the body is gathered here, in hand; otherwise it
    /// streams through a ``Courier/ByteStream`` with backpressure.
    /// - Parameters:
    ///   - request: The request.
    ///   - options: How the body is delivered.
    /// - Returns: The head and the body.
    /// - Throws: ``Courier/CourierError``.
    public func send(hop request: Request, options: StreamOptions) async throws -> StreamedResponse {
        guard let timeout = request.effectiveTimeout else {
            return try await hop(request, options: options, timer: nil)
        }
        // The hop runs as a task of its own that the idle timer can cancel.
        let reason = StopReason()
        let timedOut = CourierError(.timedOut, request: request)
        let task = TaskBox()
        let timer = IdleTimer(timeout: .seconds(timeout)) {
            reason.set(timedOut)
            task.cancel()
        }
        let work = Task { try await hop(request, options: options, timer: timer) }
        task.set(work)
        do {
            let response = try await withTaskCancellationHandler { try await work.value } onCancel: { work.cancel() }
            if response.body.bufferedData != nil { timer.stop() }
            return response
        } catch {
            timer.stop()
            throw reason.value ?? error
        }
    }

    /// The hop: the head, then the body.
    private func hop(_ request: Request, options: StreamOptions, timer: IdleTimer?) async throws -> StreamedResponse {
        let (prepared, url) = try Self.prepare(request, progress: options.uploadProgress)
        let response: HTTPClientResponse
        do {
            response = try await client.execute(prepared, deadline: .distantFuture)
        } catch {
            throw TransportErrors.courierError(for: error, request: request)
        }
        timer?.touch()
        if response.history.count > 1 {
            // A client that follows redirects itself slipped past the check at init.
            let problem = AsyncHTTPClientExecutor.ConfigurationError(problems: ["follows redirects"]).description
            throw CourierError(.transport(TransportFailure(.redirectFailed, message: problem)), request: request)
        }
        let status = Int(response.status.code)
        let headers = response.headers
        let head = Response(status: status, url: URL(string: url)) { Self.convert(headers) }
        let body = BodyReader(
            response: response, head: head, method: request.method, request: request, limit: maximumResponseSize, timer: timer)
        if options.buffersBody {
            let data = try await body.collect()
            timer?.stop()
            return StreamedResponse(head: head, body: ByteStream(data))
        }
        return StreamedResponse(head: head, body: body.stream(bufferLimit: options.bufferLimit))
    }

    /// Response headers in Courier's form, in the order they arrived, repeats kept.
    static func convert(_ headers: NIOHTTP1.HTTPHeaders) -> Courier.HTTPHeaders {
        var fields: [Courier.HTTPHeaders.Field] = []
        fields.reserveCapacity(headers.count)
        for (name, value) in headers { fields.append(.init(name: HeaderName(rawValue: name), value: value)) }
        return Courier.HTTPHeaders(fields)
    }
}

/// Why a request was stopped from outside (its idle timer), when it was.
final class StopReason: Sendable {
    private let error = NIOLockedValueBox<CourierError?>(nil)
    func set(_ value: CourierError) { error.withLockedValue { if $0 == nil { $0 = value } } }
    var value: CourierError? { error.withLockedValue { $0 } }
}

/// A task that may be cancelled before it is known.
final class TaskBox: Sendable {
    private let state = NIOLockedValueBox<(task: Task<StreamedResponse, any Error>?, cancelled: Bool)>((nil, false))
    func set(_ task: Task<StreamedResponse, any Error>) {
        let cancelled = state.withLockedValue { state -> Bool in
            state.task = task
            return state.cancelled
        }
        if cancelled { task.cancel() }
    }
    func cancel() {
        let task = state.withLockedValue { state -> Task<StreamedResponse, any Error>? in
            state.cancelled = true
            return state.task
        }
        task?.cancel()
    }
}
