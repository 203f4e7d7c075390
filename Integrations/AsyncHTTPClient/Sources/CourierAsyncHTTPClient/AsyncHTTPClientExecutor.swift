import AsyncHTTPClient
import CourierCore
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import NIOPosix

/// Sends Courier requests with AsyncHTTPClient over SwiftNIO: the same guarantees as
/// ``/Courier/URLSessionExecutor`` (held to the same conformance suite), at SwiftNIO's speed.
///
/// The executor borrows an `HTTPClient` you own (and shut down); it never makes or shuts one
/// down itself. Courier decides what AsyncHTTPClient would otherwise decide on its own, so the
/// client must leave it to Courier: make it with ``clientConfiguration(_:)`` (or set the same
/// three things on yours):
/// - **redirects** disallowed: Courier's ``/Courier/RedirectPolicy`` takes every hop (it drops
///   userinfo, credentials and your sensitive headers when a hop leaves the origin, and never
///   treats `304` or `305` as a redirect);
/// - **decompression** disabled: Courier inflates `gzip` and `deflate` bodies itself, one piece
///   at a time, so the size limit bounds memory (a compression bomb stops at the limit) and a body
///   cut inside the compressed stream is a ``/Courier/TransportFailure/Kind/truncatedBody``;
/// - **tracing** off: Courier's own observability decides what is traced (AsyncHTTPClient's
///   tracer would inject a second `traceparent` and record URLs unredacted).
///
/// A client configured otherwise is refused when the executor is made
/// (``ConfigurationError``); `HTTPClient.shared` is such a client. For the one-liner, use
/// ``shared``: an executor over a process-wide client made that way, which you never shut down.
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
/// disk). ``/Courier/Request/timeout`` is the longest wait for the head or for the next body bytes,
/// per request; ``/Courier/Request/deadline`` bounds the whole exchange, body included (Courier
/// enforces it, as on every transport). Cancelling the task, or stopping the body stream, stops
/// the transfer at once. Upload bodies (data, files, multipart, byte sequences) stream out with
/// their length when it is known. ``/Courier/Request/cachePolicy`` does not apply: this transport
/// has no cache.
///
/// The executor holds a Courier ``/Courier/Exchange`` over an ``AsyncHTTPClientTransport``: Courier
/// takes every redirect hop, and middleware that must see each hop goes in
/// ``/Courier/Executor/eachHop(_:)``.
public struct AsyncHTTPClientExecutor: Executor {
    /// The transport that sends each hop.
    public var transport: AsyncHTTPClientTransport {
        didSet { exchange.transport = transport }
    }
    /// The exchange every call runs through: the transport, the redirect policy, the middleware
    /// and the limits.
    public var exchange: Exchange
    /// The client requests go through; owned by the caller.
    public var client: HTTPClient { transport.client }

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

    /// An executor over a process-wide `HTTPClient` made with ``clientConfiguration(_:)`` on
    /// SwiftNIO's singleton event loops, as `HTTPClient.shared` is for AsyncHTTPClient: made on
    /// first use, lives as long as the process, and is never shut down (do not shut down its
    /// ``client``). Copy it to set a redirect policy, a size limit or hop middleware.
    ///
    /// ```swift
    /// let user = try await AsyncHTTPClientExecutor.shared.send(.get |> url("https://api.example.com/me") |> decode(User.self))
    /// ```
    public static let shared: AsyncHTTPClientExecutor = {
        let client = HTTPClient(eventLoopGroup: .singletonMultiThreadedEventLoopGroup, configuration: clientConfiguration())
        // Made here with Courier's own configuration: nothing for the inspection to refuse.
        return AsyncHTTPClientExecutor(transport: AsyncHTTPClientTransport(configuredClient: client))
    }()

    private init(transport: AsyncHTTPClientTransport) {
        self.transport = transport
        self.exchange = Exchange(transport: transport)
    }

    /// Creates an executor over `client`.
    /// - Parameters:
    ///   - client: A client you own, made with ``clientConfiguration(_:)`` or configured the
    ///     same way; you shut it down when done.
    ///   - redirects: How redirects are followed; ``/Courier/RedirectPolicy/follow`` by default.
    ///   - maximumResponseSize: The most bytes a response body may have, counted after
    ///     decompression, error and redirect bodies included; a larger one stops the transfer
    ///     with ``/Courier/CourierError/Cause/responseTooLarge(limit:)``. `nil` (the default) sets
    ///     no limit.
    /// - Throws: ``ConfigurationError`` when the client follows redirects, decompresses bodies or
    ///   traces requests itself.
    public init(client: HTTPClient, redirects: RedirectPolicy = .follow, maximumResponseSize: Int? = nil) throws {
        let transport = try AsyncHTTPClientTransport(client: client)
        self.transport = transport
        self.exchange = Exchange(transport: transport, redirects: redirects, maximumResponseSize: maximumResponseSize)
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
}
