@_spi(Transports) import CourierCore
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension NIOTransport {
    /// A forward proxy that hops go through: an HTTP proxy, reached over plain TCP or over TLS
    /// (a `CONNECT` tunnel for `https`, the absolute URL on the request line for `http`), or a
    /// SOCKS5 proxy (the target's host name is resolved by the proxy), with or without a user
    /// and password.
    ///
    /// Credentials are secrets: no description, dump or error shows them.
    public struct Proxy: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
        /// What the proxy speaks.
        public enum Kind: Sendable, Hashable {
            /// An HTTP proxy (RFC 9110 §9.3.6 `CONNECT`).
            case http
            /// An HTTP proxy reached over TLS (`https://proxy`), checked against the transport's
            /// trust (``/Courier/TLSOptions``) as a server is; the origin's own TLS, for an
            /// `https` origin, runs inside the tunnel.
            case https
            /// A SOCKS5 proxy (RFC 1928), with a user and password (RFC 1929) when it has
            /// credentials.
            case socks5
        }

        /// What the proxy speaks.
        public var kind: Kind
        /// The proxy's host name or IP address (IPv6 without brackets).
        public var host: String
        /// The proxy's port.
        public var port: Int
        /// The user and password sent to the proxy (`Proxy-Authorization: Basic` to an HTTP
        /// proxy, RFC 1929 to a SOCKS5 one), if any.
        public var credentials: Credentials?

        /// A user and password for a proxy.
        public struct Credentials: Sendable, Hashable {
            /// The user name.
            public var user: String
            /// The password: a secret, never printed.
            public var password: String
            /// Creates credentials.
            public init(user: String, password: String) {
                self.user = user
                self.password = password
            }
        }

        /// An HTTP proxy.
        /// - Parameters:
        ///   - host: Its host.
        ///   - port: Its port (1 to 65535).
        ///   - credentials: Basic credentials it asks for, if any.
        public static func http(host: String, port: Int, credentials: Credentials? = nil) -> Proxy {
            Proxy(kind: .http, host: host, port: port, credentials: credentials)
        }

        /// An HTTP proxy reached over TLS.
        /// - Parameters:
        ///   - host: Its host (its certificate must name it).
        ///   - port: Its port (1 to 65535).
        ///   - credentials: Basic credentials it asks for, if any.
        public static func https(host: String, port: Int, credentials: Credentials? = nil) -> Proxy {
            Proxy(kind: .https, host: host, port: port, credentials: credentials)
        }

        /// A SOCKS5 proxy.
        /// - Parameters:
        ///   - host: Its host.
        ///   - port: Its port (1 to 65535).
        ///   - credentials: The user and password it asks for, if any (255 bytes each at most).
        public static func socks5(host: String, port: Int, credentials: Credentials? = nil) -> Proxy {
            Proxy(kind: .socks5, host: host, port: port, credentials: credentials)
        }

        /// A proxy from a URL as `HTTPS_PROXY` holds it: `http://[user:password@]host[:port]`
        /// (port 80 by default; a bare `host:port` is taken as `http`),
        /// `https://[user:password@]host[:port]` (port 443 by default), or
        /// `socks5://[user:password@]host[:port]` or `socks5h://…` (port 1080 by default).
        /// - Parameter url: The URL.
        /// - Throws: ``Invalid`` naming what is wrong (never the URL, which may hold a password).
        public init(url: String) throws(Invalid) {
            var text = url.trimmingWhitespace()
            if !text.contains("://") { text = "http://" + text }
            guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased() else {
                throw Invalid(reason: "the proxy URL does not parse")
            }
            switch scheme {
            case "http": kind = .http
            case "https": kind = .https
            case "socks5", "socks5h": kind = .socks5
            default: throw Invalid(reason: "the proxy scheme \"\(scheme)\" is not http, https, socks5 or socks5h")
            }
            guard let host = components.host, !host.isEmpty else { throw Invalid(reason: "the proxy URL has no host") }
            self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
            let port = components.port ?? [.http: 80, .https: 443, .socks5: 1080][kind] ?? 80
            guard (1...65535).contains(port) else { throw Invalid(reason: "the proxy port is not between 1 and 65535") }
            self.port = port
            if let user = components.user {
                // `user` and `password` are already percent-decoded (decoding them again would
                // turn a password's literal `%41` into `A`).
                let password = components.password ?? ""
                if kind == .socks5, user.utf8.count > 255 || password.utf8.count > 255 {
                    throw Invalid(reason: "a SOCKS5 user name or password is longer than 255 bytes")
                }
                credentials = Credentials(user: user, password: password)
            }
        }

        private init(kind: Kind, host: String, port: Int, credentials: Credentials?) {
            self.kind = kind
            self.host = host
            self.port = port
            self.credentials = credentials
        }

        /// The kind, host and port; credentials only as "with credentials".
        public var description: String {
            let scheme = [.http: "http", .https: "https", .socks5: "socks5"][kind] ?? "http"
            let name = host.contains(":") ? "[\(host)]" : host
            return "\(scheme)://\(name):\(port)" + (credentials == nil ? "" : " (with credentials)")
        }

        /// The description only: credentials never show in `dump` or a debugger.
        public var customMirror: Mirror { Mirror(self, children: ["description": description]) }

        /// The `Proxy-Authorization` value for the credentials, if any.
        var authorization: String? {
            credentials.map { "Basic " + Data("\($0.user):\($0.password)".utf8).base64EncodedString() }
        }

        /// A proxy setting that cannot be used, and why.
        public struct Invalid: Error, Sendable, Hashable, CustomStringConvertible {
            /// What is wrong; never a password.
            public var reason: String
            /// Creates the error.
            public init(reason: String) { self.reason = reason }
            public var description: String { "invalid proxy: \(reason)" }
        }
    }

    /// Which proxy each origin goes through.
    public struct Proxies: Sendable, Hashable {
        /// The proxy for `http` origins, if any.
        public var http: Proxy?
        /// The proxy for `https` origins, if any.
        public var https: Proxy?
        /// Hosts reached directly, as `NO_PROXY` lists them: a name matches itself and its
        /// subdomains (`example.com` and `.example.com` both match `api.example.com`), an IP
        /// address matches itself, `*` matches every host; an entry may end in `:PORT`.
        public var bypass: [String]

        /// No proxy: every hop connects directly.
        public static let none = Proxies(http: nil, https: nil, bypass: [])

        /// Creates settings.
        public init(http: Proxy? = nil, https: Proxy? = nil, bypass: [String] = []) {
            self.http = http
            self.https = https
            self.bypass = bypass
        }

        /// The settings the environment gives, as curl reads them: `http_proxy` (lowercase only:
        /// a CGI server sets `HTTP_PROXY` from a request's `Proxy` header), `HTTPS_PROXY` or
        /// `https_proxy`, `ALL_PROXY` or `all_proxy` for either scheme when its own is unset, and
        /// `NO_PROXY` or `no_proxy`.
        /// - Parameter environment: The variables; the process's by default.
        /// - Returns: The settings (``none`` when no variable is set).
        /// - Throws: ``Proxy/Invalid`` naming the variable whose value cannot be used: a proxy
        ///   setting is never dropped silently (the hop would go direct).
        public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws(Proxy.Invalid)
            -> Proxies
        {
            func value(_ names: String...) -> (name: String, value: String)? {
                for name in names {
                    if let value = environment[name]?.trimmingWhitespace(), !value.isEmpty { return (name, value) }
                }
                return nil
            }
            func proxy(_ names: String...) throws(Proxy.Invalid) -> Proxy? {
                guard let (name, text) = names.lazy.compactMap({ value($0) }).first else { return nil }
                do {
                    return try Proxy(url: text)
                } catch {
                    throw Proxy.Invalid(reason: "\(name): \(error.reason)")
                }
            }
            let all = try proxy("ALL_PROXY", "all_proxy")
            let bypass = value("NO_PROXY", "no_proxy")?.value.split(separator: ",").map { $0.trimmingWhitespace() }
            return Proxies(
                http: try proxy("http_proxy") ?? all, https: try proxy("HTTPS_PROXY", "https_proxy") ?? all,
                bypass: bypass?.filter { !$0.isEmpty } ?? [])
        }

        /// The proxy `origin` goes through, or `nil` to connect directly.
        func proxy(for origin: Origin) -> Proxy? {
            guard let proxy = origin.isSecure ? https : http else { return nil }
            return bypasses(origin) ? nil : proxy
        }

        /// Whether `bypass` names `origin`'s host (and port, when the entry has one).
        func bypasses(_ origin: Origin) -> Bool {
            for entry in bypass {
                if entry == "*" { return true }
                var name = Substring(entry.lowercased())
                // "host:port" (not an IPv6 address, which has more colons or brackets).
                if let colon = name.lastIndex(of: ":"), name.filter({ $0 == ":" }).count == 1 || name.hasPrefix("[") {
                    guard Int(name[name.index(after: colon)...]) == origin.port else { continue }
                    name = name[..<colon]
                }
                if name.hasPrefix("[") && name.hasSuffix("]") { name = name.dropFirst().dropLast() }
                if name.hasPrefix("*.") { name = name.dropFirst() }
                if name.hasPrefix(".") { name = name.dropFirst() }
                guard !name.isEmpty else { continue }
                if origin.host == name || origin.host.hasSuffix("." + name) { return true }
            }
            return false
        }
    }
}
