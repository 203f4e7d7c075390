import CourierCore

extension NIOTransport {
    /// How a ``NIOTransport`` connects, what it keeps open and what it decodes.
    public struct Configuration: Sendable {
        /// The most connections open (or opening) to one origin at once; further hops wait in
        /// line for one to be free, and leave the line at once when their task is cancelled.
        /// At least 1. Default 8.
        public var connectionsPerHost: Int
        /// How long an idle connection is kept open for the next hop. Default 60 seconds.
        public var idleTimeout: Duration
        /// The longest wait for a TCP connection to be made. Default 10 seconds.
        /// (``/Courier/Request/timeout`` and ``/Courier/Request/deadline`` bound the hop as a whole.)
        public var connectTimeout: Duration
        /// Whom `https` servers are checked against, and who the client is.
        public var tls: TLSOptions
        /// Whether `gzip` and `deflate` bodies are decoded (and asked for with `Accept-Encoding`
        /// when the request does not say). `false` hands bodies over as they came, with their
        /// `Content-Encoding`: what a proxy or a cache wants. Default `true`.
        public var decodesBodies: Bool
        /// Whether HTTP/2 is offered to `https` servers by ALPN (hops then share one connection as
        /// streams); `false` speaks HTTP/1.1 only. Plain `http` is always HTTP/1.1. Default `true`.
        public var allowsHTTP2: Bool
        /// The proxies hops go through (none by default; ``Proxies/fromEnvironment(_:)`` reads
        /// `HTTPS_PROXY`, `http_proxy` and `NO_PROXY` as curl does).
        public var proxies: Proxies
        /// The longest a connection is used for: past it, an HTTP/1.1 connection closes when its
        /// hop ends and an HTTP/2 one takes no new stream (closing when its streams end), so that
        /// new connections follow a load balancer's or DNS's changes. `nil` (the default): no
        /// limit but the idle timeout.
        public var maximumConnectionLifetime: Duration? = nil
        /// Origins reached over a Unix domain socket, or in HTTP/2 over plain TCP (h2c): see
        /// ``Route``. None by default.
        public var routes: [Route] = []
        /// How host names become addresses (the system's resolver by default): see ``Resolver``.
        public var resolver: Resolver = .system
        /// How long an origin whose connection failed is left alone before the next attempt; a
        /// hop that finds no connection to use meanwhile fails at once with that failure.
        /// Default: 100 ms, doubling with each failure in a row up to 5 s, jittered.
        public var connectionBackoff = ConnectionBackoff()

        /// Creates a configuration.
        /// - Parameters:
        ///   - connectionsPerHost: The most connections to one origin; at least 1.
        ///   - idleTimeout: How long an idle connection is kept.
        ///   - connectTimeout: The longest wait for a connection.
        ///   - tls: Trust and client identity for `https`.
        ///   - decodesBodies: Whether `gzip` and `deflate` bodies are decoded.
        ///   - allowsHTTP2: Whether HTTP/2 is offered to `https` servers.
        ///   - proxies: The proxies hops go through.
        public init(
            connectionsPerHost: Int = 8, idleTimeout: Duration = .seconds(60), connectTimeout: Duration = .seconds(10),
            tls: TLSOptions = .system, decodesBodies: Bool = true, allowsHTTP2: Bool = true, proxies: Proxies = .none
        ) {
            self.connectionsPerHost = max(1, connectionsPerHost)
            self.idleTimeout = idleTimeout
            self.connectTimeout = connectTimeout
            self.tls = tls
            self.decodesBodies = decodesBodies
            self.allowsHTTP2 = allowsHTTP2
            self.proxies = proxies
        }

        /// The protocols offered by ALPN, most preferred first.
        var applicationProtocols: [String] { allowsHTTP2 ? ["h2", "http/1.1"] : ["http/1.1"] }
    }
}
