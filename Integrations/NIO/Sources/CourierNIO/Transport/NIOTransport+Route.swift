import CourierCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension NIOTransport {
    /// How one origin is reached when it is not by TCP to its host, or not in the protocol its
    /// scheme implies: over a Unix domain socket (the Docker Engine API, a sidecar), or in HTTP/2
    /// from the first byte over plain TCP (h2c with prior knowledge: gRPC sidecars, internal
    /// services). Requests keep their ordinary URLs, so redirects, cookies, the cache and the
    /// `Host` field work as for any origin:
    ///
    /// ```swift
    /// var configuration = NIOTransport.Configuration()
    /// configuration.routes = [
    ///     try .unixSocket("/var/run/docker.sock", for: "http://docker"),
    ///     try .http2PriorKnowledge(for: "http://sidecar:50051"),
    /// ]
    /// let info = try await NIOExecutor(configuration: configuration).send(.get |> url("http://docker/v1.43/info"))
    /// ```
    ///
    /// A routed origin is never reached through a proxy when its route is a socket; an h2c one
    /// goes through a proxy's tunnel (`CONNECT` or SOCKS5), never as a forwarded request. When
    /// two routes name one origin, the last applies.
    public struct Route: Sendable, Hashable, CustomStringConvertible {
        /// The origin it applies to, as scheme, host and port: `http://docker:80`.
        public let origin: String
        /// The path of the Unix domain socket the origin is reached through, if any.
        public let unixSocketPath: String?
        /// Whether an `http` origin speaks HTTP/2 from the first byte (h2c, prior knowledge).
        /// (`https` origins choose HTTP/2 by ALPN.)
        public let speaksHTTP2: Bool
        /// The origin, as the pool keys it.
        let key: Origin

        /// Creates a route.
        /// - Parameters:
        ///   - origin: `http://host[:port]` or `https://host[:port]`; nothing after the authority
        ///     but an optional `/`.
        ///   - unixSocketPath: An absolute path to a Unix domain socket, to connect to instead of
        ///     the host; `nil` for TCP.
        ///   - speaksHTTP2: Whether an `http` origin speaks HTTP/2 from the first byte.
        /// - Throws: ``Invalid`` naming what is wrong.
        public init(origin: String, unixSocketPath: String? = nil, speaksHTTP2: Bool = false) throws(Invalid) {
            let target: RequestTarget
            do {
                target = try RequestTarget(url: origin)
            } catch {
                throw Invalid(reason: "the origin \(origin.debugDescription) is not http://host[:port] or https://host[:port]")
            }
            guard target.target == "/", !origin.contains("#") else {
                throw Invalid(reason: "the origin \(origin.debugDescription) has a path or query; a route names scheme, host and port only")
            }
            if let path = unixSocketPath {
                guard path.hasPrefix("/") else { throw Invalid(reason: "the socket path \(path.debugDescription) is not absolute") }
                guard !path.utf8.contains(0) else { throw Invalid(reason: "the socket path holds a NUL byte") }
                guard path.utf8.count <= Self.longestSocketPath else {
                    throw Invalid(reason: "the socket path is \(path.utf8.count) bytes; a Unix domain socket's is at most \(Self.longestSocketPath)")
                }
            }
            if speaksHTTP2 && target.origin.isSecure {
                throw Invalid(reason: "an https origin chooses HTTP/2 by ALPN (Configuration.allowsHTTP2); prior knowledge is for http origins")
            }
            self.key = target.origin
            self.origin = (target.origin.isSecure ? "https://" : "http://") + (target.origin.host.contains(":") ? "[\(target.origin.host)]" : target.origin.host)
                + ":\(target.origin.port)"
            self.unixSocketPath = unixSocketPath
            self.speaksHTTP2 = speaksHTTP2
        }

        /// `origin` reached through the Unix domain socket at `path`.
        /// - Parameters:
        ///   - path: An absolute path.
        ///   - origin: `http://host[:port]` (or `https://`, for TLS over the socket).
        /// - Returns: The route.
        /// - Throws: ``Invalid`` naming what is wrong.
        public static func unixSocket(_ path: String, for origin: String) throws(Invalid) -> Route {
            try Route(origin: origin, unixSocketPath: path)
        }

        /// `origin`, an `http` one, speaking HTTP/2 from the first byte (h2c, prior knowledge).
        /// - Parameter origin: `http://host[:port]`.
        /// - Returns: The route.
        /// - Throws: ``Invalid`` naming what is wrong.
        public static func http2PriorKnowledge(for origin: String) throws(Invalid) -> Route {
            try Route(origin: origin, speaksHTTP2: true)
        }

        /// For example `http://docker:80 via /var/run/docker.sock` or `http://sidecar:50051 in h2c`.
        public var description: String {
            var text = origin
            if let unixSocketPath { text += " via \(unixSocketPath)" }
            if speaksHTTP2 { text += " in h2c" }
            return text
        }

        /// The longest path a Unix domain socket address holds (its terminating NUL aside).
        static var longestSocketPath: Int { MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1 }

        /// A route that cannot be used, and why.
        public struct Invalid: Error, Sendable, Hashable, CustomStringConvertible {
            /// What is wrong.
            public var reason: String
            /// Creates the error.
            public init(reason: String) { self.reason = reason }
            public var description: String { "invalid route: \(reason)" }
        }
    }
}
