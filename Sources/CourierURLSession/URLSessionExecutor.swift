import CourierCore
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends requests with `URLSession` (FoundationNetworking on Linux), the same way on every
/// platform: an ``Exchange`` over a ``URLSessionTransport``.
///
/// Redirects follow a ``RedirectPolicy`` taken by the exchange, hop by hop (credentials are
/// dropped when a redirect leaves the request's origin, at most 20 hops, `http`/`https` only),
/// the exchange caps a response body and runs the idle timer, and a 401 with `WWW-Authenticate` is handed back as a response
/// rather than left hanging on Linux. Middleware that must see every hop of a redirect chain
/// goes in ``Executor/eachHop(_:)``; middleware for the whole call in
/// ``Executor/with(_:)``.
///
/// Configure the session (timeouts, caches on Apple platforms, cookies, proxies, `protocolClasses` for tests)
/// through the `URLSessionConfiguration` you pass. Keep one executor and reuse it: its transport
/// owns the sessions, invalidated when the last executor or exchange using it is released. To
/// send through a session you made yourself, with its own delegate, use
/// ``CallbackExecutor/dataTask(session:)``.
///
/// ```swift
/// let executor = URLSessionExecutor()
/// let user = try await executor.send(.get |> url("https://api.example.com/me") |> decode(User.self))
/// ```
public struct URLSessionExecutor: Executor {
    /// The transport that sends each hop; it owns the sessions.
    public let transport: URLSessionTransport
    /// The exchange every call runs through: the transport, the redirect policy, the middleware
    /// and the limits.
    public var exchange: Exchange

    /// A shared executor with the default configuration.
    public static let shared = URLSessionExecutor()

    /// The session that runs buffered data tasks.
    public var session: URLSession { transport.session }

    /// Creates an executor with its own sessions.
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
        transport = URLSessionTransport(configuration: configuration)
        exchange = Exchange(transport: transport, redirects: redirects, maximumResponseSize: maximumResponseSize)
    }

    /// Creates an executor with its own sessions, after checking that URLSession can honour `tls`
    /// on this platform (see ``TLSOptions``): it is refused, never quietly weakened.
    /// - Parameters:
    ///   - configuration: The session configuration; `.default` when omitted.
    ///   - redirects: How redirects are followed; ``RedirectPolicy/follow`` by default.
    ///   - maximumResponseSize: The most bytes a response body may have; `nil` sets no limit.
    ///   - tls: Whom to trust and who the client is.
    /// - Throws: ``TLSOptions/Unsupported`` for options this platform's URLSession cannot honour.
    public init(
        configuration: URLSessionConfiguration = .default, redirects: RedirectPolicy = .follow,
        maximumResponseSize: Int? = nil, tls: TLSOptions
    ) throws(TLSOptions.Unsupported) {
        try URLSessionTransport.check(tls)
        self.init(configuration: configuration, redirects: redirects, maximumResponseSize: maximumResponseSize)
    }
}
