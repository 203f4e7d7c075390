import CourierCore

extension NIOTransport {
    /// How host names become addresses: the system's resolver (`getaddrinfo`, off the event loop),
    /// a fixed table (tests, service discovery by configuration), or a function of yours (a
    /// service registry, DNS over HTTPS), as OkHttp's `Dns` and reqwest's `resolve` allow. The
    /// lookup is the hop's `dns` phase in its ``/Courier/HopTimings``; an IP address is never
    /// looked up. Proxies' names go through it too (a SOCKS5 proxy resolves the target's itself).
    ///
    /// ```swift
    /// var configuration = NIOTransport.Configuration()
    /// configuration.resolver = .fixed(["payments.internal": ["10.0.4.17", "10.0.4.18"]])
    /// ```
    public struct Resolver: Sendable {
        indirect enum Kind: Sendable {
            case system
            case fixed([String: [String]], otherwise: Kind?)
            case custom(@Sendable (_ host: String) async throws -> [String])
        }

        let kind: Kind

        /// The system's resolver (`getaddrinfo`): both address families in one lookup.
        public static let system = Resolver(kind: .system)

        /// Names answered from `table` (each an IP address list, IPv4 or IPv6, tried in order),
        /// matched without regard to case; any other name by `otherwise`, or a
        /// ``/Courier/TransportFailure/Kind/dnsFailure`` when it is `nil`.
        /// - Parameters:
        ///   - table: Addresses by host name.
        ///   - otherwise: The resolver for names not in the table; the system's by default.
        /// - Returns: The resolver.
        public static func fixed(_ table: [String: [String]], otherwise: Resolver? = .system) -> Resolver {
            var lowered: [String: [String]] = [:]
            for (name, addresses) in table { lowered[name.lowercased(), default: []] += addresses }
            return Resolver(kind: .fixed(lowered, otherwise: otherwise?.kind))
        }

        /// Names answered by `resolve`: the IP addresses of a host (IPv4 or IPv6, tried in order).
        /// It runs off the event loop; what it throws fails the hop as a
        /// ``/Courier/TransportFailure/Kind/dnsFailure`` (its message is not shown: it may hold
        /// what it was asked).
        /// - Parameter resolve: Looks a host name up.
        /// - Returns: The resolver.
        public static func custom(_ resolve: @escaping @Sendable (_ host: String) async throws -> [String]) -> Resolver {
            Resolver(kind: .custom(resolve))
        }
    }
}
