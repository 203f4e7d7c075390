import CourierCore
import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A SOCKS5 client's side of the handshake (RFC 1928, with RFC 1929's user and password), as a
/// value: what to send, and what the proxy's bytes mean. ``SOCKS5Handler`` carries it out; every
/// step is tested without a socket. The proxy's answers are read to their exact length (never
/// more than 262 bytes at a step), so nothing the proxy sends can make it grow, and bytes after
/// the last answer (the target cannot speak first, but a proxy could send them) are the
/// connection's.
struct SOCKS5Handshake {
    /// Where the tunnel goes: a name the proxy resolves, or an address.
    enum Target: Equatable, Sendable {
        case name(String, port: Int)
        case ipv4([UInt8], port: Int)
        case ipv6([UInt8], port: Int)

        /// `host`, as an address when it is one.
        init(host: String, port: Int) {
            if let v4 = Self.parse(host, as: .ipv4) {
                self = .ipv4(v4, port: port)
            } else if let v6 = Self.parse(host, as: .ipv6) {
                self = .ipv6(v6, port: port)
            } else {
                self = .name(host, port: port)
            }
        }

        private enum Family { case ipv4, ipv6 }

        /// The address's bytes in network order, when `host` is one of `family`.
        private static func parse(_ host: String, as family: Family) -> [UInt8]? {
            var bytes = [UInt8](repeating: 0, count: family == .ipv4 ? 4 : 16)
            let parsed = bytes.withUnsafeMutableBytes { inet_pton(family == .ipv4 ? AF_INET : AF_INET6, host, $0.baseAddress) }
            return parsed == 1 ? bytes : nil
        }
    }

    /// What the handler must do next.
    enum Step: Equatable {
        /// Send these bytes, then wait for the proxy.
        case send([UInt8])
        /// Wait for more bytes.
        case wait
        /// The tunnel is open; these bytes came after the proxy's last answer.
        case established(leftover: [UInt8])
        /// The proxy refused, or spoke something else.
        case fail(SOCKS5Failure)
    }

    private enum State {
        case greeting
        case authenticating
        case connecting
        case done
    }

    let target: Target
    let credentials: NIOTransport.Proxy.Credentials?
    private var state = State.greeting
    private var received: [UInt8] = []

    init(target: Target, credentials: NIOTransport.Proxy.Credentials?) {
        self.target = target
        self.credentials = credentials
    }

    /// The greeting: no authentication, and a user and password when there are credentials; or
    /// the failure of a target or credentials SOCKS5 cannot carry (255 bytes each at most).
    mutating func start() -> Step {
        if case .name(let name, _) = target, name.utf8.count > 255 { return fail(.tooLong("the host name")) }
        if let credentials {
            if credentials.user.utf8.count > 255 { return fail(.tooLong("the user name")) }
            if credentials.password.utf8.count > 255 { return fail(.tooLong("the password")) }
        }
        return .send(credentials == nil ? [0x05, 0x01, 0x00] : [0x05, 0x02, 0x00, 0x02])
    }

    /// The proxy sent `bytes` (none: look again at what came before, after a step was sent).
    mutating func received(_ bytes: some Sequence<UInt8>) -> Step {
        guard state != .done else { return .wait }
        received.append(contentsOf: bytes)
        return advance()
    }

    /// How long the proxy's answer at this step is, once enough of it is here to tell.
    private func answerLength() -> Int? {
        switch state {
        case .greeting, .authenticating: return 2
        case .connecting:
            guard received.count >= 5 else { return nil }
            switch received[3] {
            case 0x01: return 4 + 4 + 2
            case 0x04: return 4 + 16 + 2
            case 0x03: return 4 + 1 + Int(received[4]) + 2
            default: return 5
            }
        case .done: return nil
        }
    }

    private mutating func advance() -> Step {
        guard let length = answerLength(), received.count >= length else { return .wait }
        let answer = Array(received.prefix(length))
        received.removeFirst(length)
        switch state {
        case .greeting:
            guard answer[0] == 0x05 else { return fail(.notSOCKS5("its answer to the greeting is not SOCKS5")) }
            switch answer[1] {
            case 0x00:
                state = .connecting
                return .send(connectRequest())
            case 0x02 where credentials != nil:
                state = .authenticating
                return .send(authentication())
            case 0xFF:
                return fail(.noAcceptableMethod(offeredCredentials: credentials != nil))
            default:
                return fail(.notSOCKS5("it chose an authentication method that was not offered (\(answer[1]))"))
            }
        case .authenticating:
            // RFC 1929: version 1, status 0 for success.
            guard answer[0] == 0x01 else { return fail(.notSOCKS5("its answer to the user and password is not RFC 1929's")) }
            guard answer[1] == 0x00 else { return fail(.credentialsRefused) }
            state = .connecting
            return .send(connectRequest())
        case .connecting:
            guard answer[0] == 0x05, answer[2] == 0x00, [0x01, 0x03, 0x04].contains(answer[3]) else {
                return fail(.notSOCKS5("its answer to CONNECT is not SOCKS5"))
            }
            guard answer[1] == 0x00 else { return fail(.refused(reply: answer[1])) }
            state = .done
            defer { received = [] }
            return .established(leftover: received)
        case .done:
            return .wait
        }
    }

    private mutating func fail(_ failure: SOCKS5Failure) -> Step {
        state = .done
        received = []
        return .fail(failure)
    }

    private func authentication() -> [UInt8] {
        let user = Array((credentials?.user ?? "").utf8)
        let password = Array((credentials?.password ?? "").utf8)
        return [0x01, UInt8(user.count)] + user + [UInt8(password.count)] + password
    }

    private func connectRequest() -> [UInt8] {
        let port: Int
        var bytes: [UInt8] = [0x05, 0x01, 0x00]
        switch target {
        case .ipv4(let address, let p):
            bytes += [0x01] + address
            port = p
        case .ipv6(let address, let p):
            bytes += [0x04] + address
            port = p
        case .name(let name, let p):
            let utf8 = Array(name.utf8)
            bytes += [0x03, UInt8(utf8.count)] + utf8
            port = p
        }
        return bytes + [UInt8(port >> 8 & 0xFF), UInt8(port & 0xFF)]
    }
}

/// Why a SOCKS5 proxy gave no tunnel.
enum SOCKS5Failure: Error, Equatable, CustomStringConvertible {
    /// It speaks something else (the reason says what was wrong).
    case notSOCKS5(String)
    /// It accepts none of the authentication methods offered.
    case noAcceptableMethod(offeredCredentials: Bool)
    /// It refused the user and password.
    case credentialsRefused
    /// It could not, or would not, connect to the target (RFC 1928's reply code).
    case refused(reply: UInt8)
    /// A value longer than SOCKS5 carries (what it is: "the host name", "the password").
    case tooLong(String)

    /// Whether the target, not the proxy, was the trouble (a retry may find it up).
    var isTargetUnreachable: Bool {
        if case .refused(let reply) = self { return [0x01, 0x03, 0x04, 0x05, 0x06].contains(reply) }
        return false
    }

    var description: String {
        switch self {
        case .notSOCKS5(let reason): "the SOCKS5 proxy's answer is not SOCKS5: \(reason)"
        case .noAcceptableMethod(let offered):
            offered
                ? "the SOCKS5 proxy accepts neither no authentication nor a user and password"
                : "the SOCKS5 proxy requires authentication (give the proxy a user and password)"
        case .credentialsRefused: "the SOCKS5 proxy refused the user and password"
        case .refused(let reply):
            "the SOCKS5 proxy could not connect to the server (" + Self.reason(reply) + ")"
        case .tooLong(let what): "\(what) is longer than SOCKS5 carries (255 bytes)"
        }
    }

    private static func reason(_ reply: UInt8) -> String {
        switch reply {
        case 0x01: "general failure"
        case 0x02: "not allowed by its rules"
        case 0x03: "network unreachable"
        case 0x04: "host unreachable"
        case 0x05: "connection refused"
        case 0x06: "TTL expired"
        case 0x07: "command not supported"
        case 0x08: "address type not supported"
        default: "reply \(reply)"
        }
    }
}
