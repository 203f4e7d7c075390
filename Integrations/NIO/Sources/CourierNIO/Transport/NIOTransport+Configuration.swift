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

        /// Creates a configuration.
        /// - Parameters:
        ///   - connectionsPerHost: The most connections to one origin; at least 1.
        ///   - idleTimeout: How long an idle connection is kept.
        ///   - connectTimeout: The longest wait for a connection.
        ///   - tls: Trust and client identity for `https`.
        ///   - decodesBodies: Whether `gzip` and `deflate` bodies are decoded.
        public init(
            connectionsPerHost: Int = 8, idleTimeout: Duration = .seconds(60), connectTimeout: Duration = .seconds(10),
            tls: TLSOptions = .system, decodesBodies: Bool = true
        ) {
            self.connectionsPerHost = max(1, connectionsPerHost)
            self.idleTimeout = idleTimeout
            self.connectTimeout = connectTimeout
            self.tls = tls
            self.decodesBodies = decodesBodies
        }
    }
}
