import CourierCore
import Dispatch
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Resolves a host name for SwiftNIO's Happy Eyeballs connector by the transport's
/// ``NIOTransport/Resolver`` (the system's as SwiftNIO's own resolver does it: one `getaddrinfo`
/// for both families, off the event loop and off Swift's concurrency threads; a fixed table; or
/// the caller's function), and records how long it took in the hop's ``HopTimings`` (SwiftNIO's
/// resolver is internal and says nothing of its time). An IP address is not looked up at all: no
/// `dns` phase.
final class TimedResolver: NIOPosix.Resolver, Sendable {
    private let timings: HopTimings.Recorder?
    private let resolver: NIOTransport.Resolver
    private let v4: EventLoopPromise<[SocketAddress]>
    private let v6: EventLoopPromise<[SocketAddress]>
    private let started = NIOLockedValueBox(false)

    init(loop: any EventLoop, resolver: NIOTransport.Resolver = .system, timings: HopTimings.Recorder?) {
        self.timings = timings
        self.resolver = resolver
        self.v4 = loop.makePromise()
        self.v6 = loop.makePromise()
    }

    /// The connector asks for AAAA, then A: the one lookup starts with the first question.
    func initiateAAAAQuery(host: String, port: Int) -> EventLoopFuture<[SocketAddress]> {
        start(host: host, port: port)
        return v6.futureResult
    }

    func initiateAQuery(host: String, port: Int) -> EventLoopFuture<[SocketAddress]> {
        start(host: host, port: port)
        return v4.futureResult
    }

    /// Answers both questions, once: at once for an IP address, after one lookup otherwise.
    private func start(host: String, port: Int) {
        guard !started.withLockedValue({ started in defer { started = true }; return started }) else { return }
        if let address = try? SocketAddress(ipAddress: host, port: port) {
            v6.succeed(address.protocol == .inet6 ? [address] : [])
            v4.succeed(address.protocol == .inet ? [address] : [])
            return
        }
        timings?.begin(.dns)
        let answer: @Sendable (Result<([SocketAddress], [SocketAddress]), any Error>) -> Void = { [self] result in
            timings?.end(.dns)
            // Connecting starts once the addresses are known.
            timings?.begin(.connect)
            switch result {
            case .success(let (v4, v6)):
                self.v6.succeed(v6)
                self.v4.succeed(v4)
            case .failure(let error):
                self.v6.fail(error)
                self.v4.fail(error)
            }
        }
        resolve(host: host, port: port, by: resolver.kind, answer: answer)
    }

    /// Looks `host` up by `kind`, and answers.
    private func resolve(
        host: String, port: Int, by kind: NIOTransport.Resolver.Kind,
        answer: @escaping @Sendable (Result<([SocketAddress], [SocketAddress]), any Error>) -> Void
    ) {
        switch kind {
        case .system:
            DispatchQueue.global().async { answer(Self.lookUp(host: host, port: port)) }
        case .fixed(let table, let otherwise):
            if let addresses = table[host.lowercased()] {
                answer(Self.addresses(addresses, host: host, port: port))
            } else if let otherwise {
                resolve(host: host, port: port, by: otherwise, answer: answer)
            } else {
                answer(.failure(LookupFailure(host: host, code: 0)))
            }
        case .custom(let lookUp):
            Task {
                do {
                    answer(Self.addresses(try await lookUp(host), host: host, port: port))
                } catch {
                    answer(.failure(LookupFailure(host: host, code: 0, resolverFailed: true)))
                }
            }
        }
    }

    /// The IP addresses in `answers`, by family; a failure when one is not an IP address or
    /// there is none.
    private static func addresses(_ answers: [String], host: String, port: Int) -> Result<([SocketAddress], [SocketAddress]), any Error> {
        var v4: [SocketAddress] = []
        var v6: [SocketAddress] = []
        for answer in answers {
            let bare = answer.hasPrefix("[") && answer.hasSuffix("]") ? String(answer.dropFirst().dropLast()) : answer
            guard let address = try? SocketAddress(ipAddress: bare, port: port) else {
                return .failure(LookupFailure(host: host, code: 0, notAnAddress: true))
            }
            if address.protocol == .inet6 { v6.append(address) } else { v4.append(address) }
        }
        guard !v4.isEmpty || !v6.isEmpty else { return .failure(LookupFailure(host: host, code: 0)) }
        return .success((v4, v6))
    }

    /// Nothing to cancel: the lookup runs to its end, and its answer is dropped.
    func cancelQueries() {}

    /// `getaddrinfo` for TCP, both families; blocking, so never on an event loop.
    private static func lookUp(host: String, port: Int) -> Result<([SocketAddress], [SocketAddress]), any Error> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc) || canImport(Musl)
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
            hints.ai_socktype = SOCK_STREAM
        #endif
        hints.ai_protocol = NIOBSDSocket.OptionLevel.tcp.rawValue
        var list: UnsafeMutablePointer<addrinfo>?
        let code = getaddrinfo(host, String(port), &hints, &list)
        guard code == 0, let first = list else { return .failure(LookupFailure(host: host, code: code)) }
        defer { freeaddrinfo(list) }
        var v4: [SocketAddress] = []
        var v6: [SocketAddress] = []
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let info = next?.pointee {
            defer { next = info.ai_next }
            guard let address = info.ai_addr else { continue }
            switch info.ai_family {
            case AF_INET:
                address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4.append(SocketAddress($0.pointee, host: host)) }
            case AF_INET6:
                address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6.append(SocketAddress($0.pointee, host: host)) }
            default: continue
            }
        }
        guard !v4.isEmpty || !v6.isEmpty else { return .failure(LookupFailure(host: host, code: 0)) }
        return .success((v4, v6))
    }
}

/// A host name `getaddrinfo` could not resolve (SwiftNIO reports it as a DNS failure of the
/// connection, which Courier types as ``/Courier/TransportFailure/Kind/dnsFailure``).
struct LookupFailure: Error, CustomStringConvertible {
    let host: String
    let code: Int32
    /// The caller's resolver threw.
    var resolverFailed = false
    /// The resolver answered with something that is not an IP address.
    var notAnAddress = false

    var description: String {
        let reason =
            if resolverFailed { "the resolver failed" } else if notAnAddress { "the resolver's answer is not an IP address" } else if code == 0 {
                "no IPv4 or IPv6 address"
            } else { String(cString: gai_strerror(code)) }
        return "\(host) could not be resolved: \(reason)"
    }
}
