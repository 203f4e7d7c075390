import AsyncHTTPClient
import Courier
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// Sends Courier requests with AsyncHTTPClient over SwiftNIO: the same guarantees as
/// ``Courier/URLSessionExecutor`` (held to the same conformance suite), at SwiftNIO's speed.
///
/// The executor borrows an `HTTPClient` you own (and shut down); it never makes or shuts one
/// down itself. Courier decides what AsyncHTTPClient would otherwise decide on its own, so the
/// client must leave it to Courier: make it with ``clientConfiguration(_:)`` (or set the same
/// three things on yours):
/// - **redirects** disallowed: Courier's ``Courier/RedirectPolicy`` takes every hop (it drops
///   userinfo, credentials and your sensitive headers when a hop leaves the origin, and never
///   treats `304` or `305` as a redirect);
/// - **decompression** disabled: Courier inflates `gzip` and `deflate` bodies itself, one piece
///   at a time, so the size limit bounds memory (a compression bomb stops at the limit) and a body
///   cut inside the compressed stream is a ``Courier/TransportFailure/Kind/truncatedBody``;
/// - **tracing** off: Courier's own observability decides what is traced (AsyncHTTPClient's
///   tracer would inject a second `traceparent` and record URLs unredacted).
///
/// A client configured otherwise is refused when the executor is made
/// (``ConfigurationError``); `HTTPClient.shared` is such a client.
///
/// ```swift
/// let client = HTTPClient(eventLoopGroup: .singletonMultiThreadedEventLoopGroup,
///                         configuration: AsyncHTTPClientExecutor.clientConfiguration())
/// defer { try? await client.shutdown() }   // the client is yours
/// let executor = try AsyncHTTPClientExecutor(client: client)
/// let user = try await executor.send(.get |> url("https://api.example.com/me") |> decode(User.self))
/// ```
///
/// Bodies stream with real backpressure: a slow reader slows the socket (nothing is spilled to
/// disk). ``Courier/Request/timeout`` is the longest wait for the head or for the next body bytes,
/// per request; ``Courier/Request/deadline`` bounds the whole exchange, body included (Courier
/// enforces it, as on every transport). Cancelling the task, or stopping the body stream, stops
/// the transfer at once. Upload bodies (data, files, multipart, byte sequences) stream out with
/// their length when it is known. ``Courier/Request/cachePolicy`` does not apply: this transport
/// has no cache.
public struct AsyncHTTPClientExecutor: Executor {
    /// The client requests go through; owned by the caller.
    public let client: HTTPClient
    /// How redirects are followed. A copy of the executor with another policy shares the client.
    public var redirects: RedirectPolicy
    /// The most bytes a response body may have, counted after decompression, or `nil` for no
    /// limit (negative values count as `0`).
    public var maximumResponseSize: Int? {
        get { sizeLimit }
        set { sizeLimit = newValue.map { max(0, $0) } }
    }
    private var sizeLimit: Int?

    /// A client that does not leave redirects, decompression and tracing to Courier.
    public struct ConfigurationError: Error, CustomStringConvertible, Sendable {
        /// What the client does that it must not.
        public var problems: [String]
        /// A sentence naming the problems and the fix.
        public var description: String {
            "the HTTPClient \(problems.joined(separator: ", ")); make it with AsyncHTTPClientExecutor.clientConfiguration() "
                + "(redirects disallowed, decompression disabled, no tracer): Courier does these itself"
        }
    }

    /// Creates an executor over `client`.
    /// - Parameters:
    ///   - client: A client you own, made with ``clientConfiguration(_:)`` or configured the
    ///     same way; you shut it down when done.
    ///   - redirects: How redirects are followed; ``Courier/RedirectPolicy/follow`` by default.
    ///   - maximumResponseSize: The most bytes a response body may have, counted after
    ///     decompression, error and redirect bodies included; a larger one stops the transfer
    ///     with ``Courier/CourierError/Cause/responseTooLarge(limit:)``. `nil` (the default) sets
    ///     no limit.
    /// - Throws: ``ConfigurationError`` when the client follows redirects, decompresses bodies or
    ///   traces requests itself.
    public init(client: HTTPClient, redirects: RedirectPolicy = .follow, maximumResponseSize: Int? = nil) throws {
        let problems = ClientInspection.problems(of: client)
        guard problems.isEmpty else { throw ConfigurationError(problems: problems) }
        self.client = client
        self.redirects = redirects
        self.sizeLimit = maximumResponseSize.map { max(0, $0) }
    }

    /// A client configuration that leaves redirects, decompression and tracing to Courier, and
    /// fails a request whose connection cannot be made (AsyncHTTPClient's pool otherwise retries
    /// until the request's deadline); everything else as `base` has it.
    /// - Parameter base: The configuration to start from (timeouts, TLS, proxy, pool); AsyncHTTPClient's
    ///   default when omitted.
    /// - Returns: The configuration to make the `HTTPClient` with.
    public static func clientConfiguration(_ base: HTTPClient.Configuration = HTTPClient.Configuration()) -> HTTPClient.Configuration {
        var configuration = base
        configuration.redirectConfiguration = .disallow
        configuration.decompression = .disabled
        configuration.tracing.tracer = nil
        // A refused connection fails the request (a transient error retry middleware can act on)
        // instead of being retried by the pool until the request's deadline.
        configuration.connectionPool.retryConnectionEstablishment = false
        return configuration
    }

    /// Sends `request` and returns once the head of the last hop arrives.
    ///
    /// With ``Courier/StreamOptions/buffersBody`` the body is gathered here, in hand; otherwise it
    /// streams through a ``Courier/ByteStream`` with backpressure. Every hop of a redirect is
    /// decided by ``redirects``.
    /// - Parameters:
    ///   - request: The request.
    ///   - options: How the body is delivered.
    /// - Returns: The head and the body.
    /// - Throws: ``Courier/CourierError``.
    public func execute(_ request: Request, options: StreamOptions) async throws -> StreamedResponse {
        guard let timeout = request.effectiveTimeout else {
            return try await exchange(request, options: options, timer: nil)
        }
        // The exchange runs as a task of its own that the idle timer can cancel.
        let reason = StopReason()
        let timedOut = CourierError(.timedOut, request: request)
        let task = TaskBox()
        let timer = IdleTimer(timeout: .seconds(timeout)) {
            reason.set(timedOut)
            task.cancel()
        }
        let work = Task { try await exchange(request, options: options, timer: timer) }
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

    /// The exchange: every hop of the redirect chain, then the body.
    private func exchange(_ request: Request, options: StreamOptions, timer: IdleTimer?) async throws -> StreamedResponse {
        // Made at the first redirect: most requests have none.
        var chain: RedirectPolicy.Chain?
        while true {
            let current = chain?.current ?? request
            let (prepared, url) = try Self.prepare(current, progress: options.uploadProgress)
            let response: HTTPClientResponse
            do {
                response = try await client.execute(prepared, deadline: .distantFuture)
            } catch {
                throw TransportErrors.courierError(for: error, request: request)
            }
            timer?.touch()
            if response.history.count > 1 {
                // A client that follows redirects itself slipped past the check at init.
                throw CourierError(
                    .transport(TransportFailure(.redirectFailed, message: ConfigurationError(problems: ["follows redirects"]).description)),
                    request: request)
            }
            let status = Int(response.status.code)
            if redirects.follows, Self.redirectStatuses.contains(status) {
                var hops = chain ?? RedirectPolicy.Chain(request)
                let step = redirects.next(status: status, location: response.headers.first(name: "location"), chain: &hops)
                chain = hops
                switch step {
                case .follow:
                    await Self.discard(response.body)
                    continue
                case .fail(let failure):
                    throw CourierError(.transport(failure), request: request)
                case .deliver:
                    break
                }
            }
            let headers = response.headers
            let head = Response(status: status, url: URL(string: url)) { Self.convert(headers) }
            let body = BodyReader(
                response: response, head: head, method: current.method, request: request, limit: maximumResponseSize, timer: timer)
            if options.buffersBody {
                let data = try await body.collect()
                timer?.stop()
                return StreamedResponse(head: head, body: ByteStream(data))
            }
            return StreamedResponse(head: head, body: body.stream(bufferLimit: options.bufferLimit))
        }
    }

    static let redirectStatuses: Set<Int> = [301, 302, 303, 307, 308]

    /// Reads and drops a small redirect body, so the connection can be reused; a large one is
    /// left (dropping the body closes the connection instead).
    private static func discard(_ body: HTTPClientResponse.Body) async {
        var total = 0
        do {
            for try await buffer in body {
                total += buffer.readableBytes
                if total > 64 << 10 { return }
            }
        } catch {}
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
