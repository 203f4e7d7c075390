import CourierCore
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import NIOPosix

/// Sends Courier requests over Courier's own connections on SwiftNIO (``NIOTransport``: HTTP/1.1,
/// and HTTP/2 by ALPN or with prior knowledge; over TCP, a Unix domain socket or a proxy): held to the same conformance suite as ``/Courier/URLSessionExecutor``,
/// with nothing a server sends able to stop the process.
///
/// ```swift
/// let user = try await NIOExecutor.shared.send(.get |> url("https://api.example.com/me") |> decode(User.self))
/// ```
///
/// Bodies stream with real backpressure: a slow reader slows the socket. ``/Courier/Request/timeout``
/// is the longest wait for the head or for the next body bytes; ``/Courier/Request/deadline``
/// bounds the whole exchange, body included. Cancelling the task, or stopping the body stream,
/// closes the connection at once. ``/Courier/Request/cachePolicy`` does not apply: this transport
/// has no cache (``/Courier/HTTPCache`` is one, on every transport).
///
/// The executor holds a Courier ``/Courier/Exchange`` over a ``NIOTransport``: Courier takes
/// every redirect hop, and middleware that must see each hop goes in ``/Courier/Executor/eachHop(_:)``.
public struct NIOExecutor: Executor {
    /// The transport that sends each hop; copies of the executor share it (and its connections).
    public var transport: NIOTransport {
        didSet { exchange.transport = transport }
    }
    /// The exchange every call runs through: the transport, the redirect policy, the middleware
    /// and the limits.
    public var exchange: Exchange

    /// An executor over a process-wide transport with the default ``NIOTransport/Configuration``
    /// on SwiftNIO's process-wide event loops: made on first use, never shut down. Copy it to set
    /// a redirect policy, a size limit or middleware.
    public static let shared = NIOExecutor(transport: sharedTransport)

    /// The default configuration names no certificate to read: nothing can fail.
    private static let sharedTransport = NIOTransport(
        configuration: NIOTransport.Configuration(), eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
        tls: NIOTransport.defaultTLSSettings)

    /// Creates an executor over `transport`.
    /// - Parameters:
    ///   - transport: The transport; you shut it down when done with every executor over it.
    ///   - redirects: How redirects are followed; ``/Courier/RedirectPolicy/follow`` by default.
    ///   - maximumResponseSize: The most bytes a response body may have, counted after decoding;
    ///     `nil` (the default) sets no limit.
    public init(transport: NIOTransport, redirects: RedirectPolicy = .follow, maximumResponseSize: Int? = nil) {
        self.transport = transport
        self.exchange = Exchange(transport: transport, redirects: redirects, maximumResponseSize: maximumResponseSize)
    }

    /// Creates an executor over a transport of its own made with `configuration`.
    /// - Parameters:
    ///   - configuration: Pool limits, timeouts, TLS and decoding.
    ///   - redirects: How redirects are followed.
    ///   - maximumResponseSize: The most bytes a response body may have, counted after decoding.
    /// - Throws: ``/Courier/TLSOptions/Invalid`` when a certificate or key cannot be read.
    public init(
        configuration: NIOTransport.Configuration, redirects: RedirectPolicy = .follow, maximumResponseSize: Int? = nil
    ) throws(TLSOptions.Invalid) {
        self.init(transport: try NIOTransport(configuration: configuration), redirects: redirects, maximumResponseSize: maximumResponseSize)
    }
}
