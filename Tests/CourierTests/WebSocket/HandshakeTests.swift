import Courier
import Foundation
import Testing

@testable import CourierWebSocket

/// RFC 6455 §4: what the opening request carries, and what a client checks of the `101`.
@Suite("WebSocket handshake")
struct HandshakeTests {
    @Test("the accept answers the key as RFC 6455 §1.3's example says")
    func acceptOfTheRFCExample() {
        #expect(Handshake.accept(for: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test("SHA-1 matches FIPS 180's examples (one block, two blocks)")
    func sha1() {
        func hex(_ text: String) -> String { SHA1.digest(Array(text.utf8)).map { String(format: "%02x", $0) }.joined() }
        #expect(hex("abc") == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(hex("") == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        #expect(hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
    }

    @Test("the request: ws and wss become http and https; a fresh 16-byte key, version 13, the subprotocols")
    func request() throws {
        let handshake = Handshake(subprotocols: ["chat.v2", "chat.v1"])
        let request = handshake.prepare(.get |> url("wss://chat.test/live?room=1"))
        try request.validate()
        #expect(request.baseURL?.scheme == "https")
        #expect(request.headers["Sec-WebSocket-Version"] == "13")
        #expect(request.headers["Sec-WebSocket-Protocol"] == "chat.v2, chat.v1")
        #expect(Data(base64Encoded: try #require(request.headers["Sec-WebSocket-Key"]))?.count == 16)
        #expect(Handshake(subprotocols: []).key != Handshake(subprotocols: []).key)
        #expect(handshake.prepare(.get |> url("ws://chat.test/")).baseURL?.scheme == "http")
    }

    @Test("a POST, a body, a subprotocol that is not a token or offered twice: invalid, never sent")
    func invalidRequests() {
        let bad: [Request] = [
            Handshake(subprotocols: []).prepare(.post |> url("wss://chat.test/")),
            Handshake(subprotocols: []).prepare(.get |> url("wss://chat.test/") |> body(Data("x".utf8))),
            Handshake(subprotocols: ["a b"]).prepare(.get |> url("wss://chat.test/")),
            Handshake(subprotocols: ["a", "a"]).prepare(.get |> url("wss://chat.test/")),
        ]
        for request in bad {
            #expect(throws: CourierError.self) { try request.validate() }
        }
    }

    @Test("the 101 must say websocket, Upgrade, the right accept, an offered subprotocol and no extension")
    func responseChecks() throws {
        let handshake = Handshake(key: "dGhlIHNhbXBsZSBub25jZQ==", subprotocols: ["chat"])
        var good = HTTPHeaders()
        good.set("Upgrade", "WebSocket")
        good.set("Connection", "keep-alive, Upgrade")
        good.set("Sec-WebSocket-Accept", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        #expect(try handshake.check(good) == nil)
        var chosen = good
        chosen.set("Sec-WebSocket-Protocol", "chat")
        #expect(try handshake.check(chosen) == "chat")
        var variants: [HTTPHeaders] = []
        for (name, value) in [
            ("Upgrade", "h2c"), ("Connection", "close"), ("Sec-WebSocket-Accept", "AAAA"), ("Sec-WebSocket-Protocol", "other"),
            ("Sec-WebSocket-Extensions", "permessage-deflate"),
        ] {
            var headers = good
            headers.set(HeaderName(rawValue: name), value)
            variants.append(headers)
        }
        var missing = good
        missing.remove("Sec-WebSocket-Accept")
        variants.append(missing)
        for headers in variants {
            #expect(throws: WebSocketFailure.self) { try handshake.check(headers) }
        }
    }

    @Test("timers are held between zero and a year; a zero or negative ping interval is none")
    func optionBounds() {
        var options = WebSocketOptions(maximumMessageSize: -5, pingInterval: .seconds(-1))
        #expect(options.maximumMessageSize == 0)
        #expect(options.pingInterval == nil)
        options.pingInterval = .seconds(Int64.max)
        options.pingTimeout = .seconds(Int64.max)
        options.closeTimeout = .seconds(-3)
        options.bufferedMessages = 0
        #expect(options.pingInterval == .seconds(Request.maximumInterval))
        #expect(options.pingTimeout == .seconds(Request.maximumInterval))
        #expect(options.closeTimeout == .zero)
        #expect(options.bufferedMessages == 1)
    }
}
