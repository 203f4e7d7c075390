@testable import CourierNIO
import Testing

/// The SOCKS5 handshake, byte by byte, without a socket (RFC 1928, RFC 1929).
@Suite("NIOExecutor: the SOCKS5 handshake")
struct SOCKS5HandshakeTests {
    static let credentials = NIOTransport.Proxy.Credentials(user: "ann", password: "pw")

    @Test func withoutAuthenticationANameIsAskedFor() {
        var handshake = SOCKS5Handshake(target: .init(host: "api.test", port: 443), credentials: nil)
        #expect(handshake.start() == .send([0x05, 0x01, 0x00]))
        #expect(handshake.received([0x05]) == .wait, "half an answer")
        let connect: [UInt8] = [0x05, 0x01, 0x00, 0x03, 8] + Array("api.test".utf8) + [0x01, 0xBB]
        #expect(handshake.received([0x00]) == .send(connect))
        // A reply with an IPv4 bound address, in two pieces.
        #expect(handshake.received([0x05, 0x00, 0x00, 0x01, 10, 0]) == .wait)
        #expect(handshake.received([0, 1, 0x1F, 0x90]) == .established(leftover: []))
    }

    @Test func aUserAndPasswordAreSentWhenTheProxyChoosesThem() {
        var handshake = SOCKS5Handshake(target: .init(host: "127.0.0.1", port: 80), credentials: Self.credentials)
        #expect(handshake.start() == .send([0x05, 0x02, 0x00, 0x02]))
        #expect(handshake.received([0x05, 0x02]) == .send([0x01, 3] + Array("ann".utf8) + [2] + Array("pw".utf8)))
        #expect(handshake.received([0x01, 0x00]) == .send([0x05, 0x01, 0x00, 0x01, 127, 0, 0, 1, 0x00, 0x50]))
        // A domain-name bound address, and bytes after it: the handler's to refuse.
        #expect(handshake.received([0x05, 0x00, 0x00, 0x03, 1, UInt8(ascii: "x"), 0, 80, 0xAA]) == .established(leftover: [0xAA]))
    }

    @Test func anIPv6TargetIsSentAsAnAddress() {
        var handshake = SOCKS5Handshake(target: .init(host: "::1", port: 8443), credentials: nil)
        _ = handshake.start()
        #expect(handshake.received([0x05, 0x00]) == .send([0x05, 0x01, 0x00, 0x04] + Array(repeating: 0, count: 15) + [1, 0x20, 0xFB]))
    }

    @Test(arguments: [
        ([0x05, 0xFF] as [UInt8], SOCKS5Failure.noAcceptableMethod(offeredCredentials: false)),
        ([0x04, 0x00], .notSOCKS5("its answer to the greeting is not SOCKS5")),
        ([0x05, 0x02], .notSOCKS5("it chose an authentication method that was not offered (2)")),
        ([0x05, 0x00, 0x05, 0x05, 0x00, 0x01, 0, 0, 0, 0, 0, 0], .refused(reply: 5)),
        ([0x05, 0x00, 0x05, 0x00, 0x00, 0x07, 0, 0, 0, 0, 0, 0], .notSOCKS5("its answer to CONNECT is not SOCKS5")),
    ])
    func aProxyThatRefusesOrSpeaksSomethingElseFailsTheTunnel(answer: [UInt8], failure: SOCKS5Failure) {
        var handshake = SOCKS5Handshake(target: .init(host: "api.test", port: 443), credentials: nil)
        _ = handshake.start()
        var step = handshake.received(answer.prefix(2))
        if case .send = step { step = handshake.received(answer.dropFirst(2)) }
        #expect(step == .fail(failure))
        #expect(handshake.received([0x05, 0x00]) == .wait, "nothing after a failure")
    }

    @Test func refusedCredentialsAndValuesTooLongFail() {
        var refused = SOCKS5Handshake(target: .init(host: "api.test", port: 443), credentials: Self.credentials)
        _ = refused.start()
        _ = refused.received([0x05, 0x02])
        #expect(refused.received([0x01, 0x01]) == .fail(.credentialsRefused))
        var longName = SOCKS5Handshake(target: .init(host: String(repeating: "a", count: 256), port: 443), credentials: nil)
        #expect(longName.start() == .fail(.tooLong("the host name")))
        var longPassword = SOCKS5Handshake(
            target: .init(host: "api.test", port: 443), credentials: .init(user: "ann", password: String(repeating: "p", count: 300)))
        #expect(longPassword.start() == .fail(.tooLong("the password")))
        #expect(!SOCKS5Failure.tooLong("the password").description.contains("ppp"))
    }
}
