import Courier
import Foundation
import Testing

@testable import CourierWebSocket

/// RFC 6455 §5 as a client parses a server's frames: each rule a frame can break, checked at the
/// header, before its payload is kept.
@Suite("WebSocket frames: parsing and encoding")
struct FrameParserTests {
    /// A server frame (never masked) with the given first byte and payload.
    static func serverFrame(_ first: UInt8, _ payload: [UInt8] = []) -> Data {
        var frame = WebSocketFrame(.binary, payload: Data(payload)).encoded(mask: nil)
        frame[0] = first
        return frame
    }

    static func parse(_ bytes: Data, limit: Int = 1 << 20, compression: Bool = false) throws(WebSocketFailure) -> [WebSocketFrame] {
        var parser = FrameParser(role: .client, maximumFrameSize: limit, allowsCompression: compression)
        parser.append(bytes)
        var frames: [WebSocketFrame] = []
        while let frame = try parser.next() { frames.append(frame) }
        return frames
    }

    @Test("a frame round-trips at every length form (7-bit, 16-bit, 64-bit)", arguments: [0, 1, 125, 126, 127, 65_535, 65_536, 200_000])
    func roundTrip(length: Int) throws {
        let payload = Data((0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let frames = try Self.parse(WebSocketFrame(.binary, payload: payload).encoded(mask: nil))
        #expect(frames == [WebSocketFrame(.binary, payload: payload)])
    }

    @Test("the shortest length form is used")
    func shortestLength() {
        #expect(WebSocketFrame(.text, payload: Data(count: 125)).encoded(mask: nil).count == 2 + 125)
        #expect(WebSocketFrame(.text, payload: Data(count: 126)).encoded(mask: nil).count == 4 + 126)
        #expect(WebSocketFrame(.text, payload: Data(count: 65_535)).encoded(mask: nil).count == 4 + 65_535)
        #expect(WebSocketFrame(.text, payload: Data(count: 65_536)).encoded(mask: nil).count == 10 + 65_536)
    }

    @Test("a client's frame is masked, and the server's parser unmasks it (every alignment)", arguments: [0, 1, 3, 7, 8, 9, 15, 16, 17, 300])
    func masking(length: Int) throws {
        let payload = Data((0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })
        let encoded = WebSocketFrame(.text, payload: payload).encoded(mask: 0xA1B2_C3D4)
        #expect(encoded[1] & 0x80 != 0)
        if length >= 4 { #expect(encoded.suffix(length) != payload) }
        // On the wire as RFC 6455 §5.3 says: the key's bytes in order, then byte i XOR key[i % 4].
        let header = length < 126 ? 2 : 4
        let key: [UInt8] = [0xA1, 0xB2, 0xC3, 0xD4]
        #expect(Array(encoded.dropFirst(header).prefix(4)) == key)
        #expect(Array(encoded.suffix(length)) == payload.enumerated().map { $0.element ^ key[$0.offset % 4] })
        var parser = FrameParser(role: .server, maximumFrameSize: 1 << 20)
        parser.append(encoded)
        #expect(try parser.next() == WebSocketFrame(.text, payload: payload))
    }


    @Test("a frame encoded into a transport's buffer is the same bytes; a buffer of the wrong size is left as it is", arguments: [0, 5, 126, 70_000])
    func encodedInPlace(length: Int) {
        let payload = Data((0..<length).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        let frame = WebSocketFrame(.binary, payload: payload, isFinal: false)
        for mask: UInt32? in [nil, 0x0102_0304] {
            let count = WebSocketFrame.wireCount(payload: length, masked: mask != nil)
            var wire = [UInt8](repeating: 0xEE, count: count)
            wire.withUnsafeMutableBytes { frame.encode(into: $0, mask: mask) }
            #expect(Data(wire) == frame.encoded(mask: mask))
            var short = [UInt8](repeating: 0xEE, count: count - 1)
            short.withUnsafeMutableBytes { frame.encode(into: $0, mask: mask) }
            #expect(short.allSatisfy { $0 == 0xEE })
        }
    }
    @Test("frames split at every byte come out whole, in order")
    func splitAnywhere() throws {
        let stream = WebSocketFrame(.text, payload: Data("hello".utf8)).encoded(mask: nil)
            + WebSocketFrame(.ping, payload: Data([1, 2])).encoded(mask: nil)
            + WebSocketFrame(.binary, payload: Data(count: 300)).encoded(mask: nil)
        var parser = FrameParser(role: .client, maximumFrameSize: 1 << 20)
        var frames: [WebSocketFrame] = []
        for byte in stream {
            parser.append([byte])
            while let frame = try parser.next() { frames.append(frame) }
        }
        #expect(frames.map(\.opcode) == [.text, .ping, .binary])
        #expect(frames[2].payload.count == 300)
        #expect(parser.bufferedCount == 0)
    }

    /// Each frame a client must refuse, with the code it closes with.
    static let refused: [(String, Data, WebSocketFailure.Kind)] = [
        ("a masked frame from the server", WebSocketFrame(.text, payload: Data("x".utf8)).encoded(mask: 1), .protocolError),
        ("RSV1 without compression", serverFrame(0xC1, [0x61]), .protocolError),
        ("RSV2", serverFrame(0xA1, [0x61]), .protocolError),
        ("RSV3", serverFrame(0x91, [0x61]), .protocolError),
        ("opcode 3 (reserved data)", serverFrame(0x83), .protocolError),
        ("opcode 7 (reserved data)", serverFrame(0x87), .protocolError),
        ("opcode 11 (reserved control)", serverFrame(0x8B), .protocolError),
        ("opcode 15 (reserved control)", serverFrame(0x8F), .protocolError),
        ("a fragmented ping", serverFrame(0x09, [1]), .protocolError),
        ("a fragmented close", serverFrame(0x08), .protocolError),
        ("a ping of 126 bytes", WebSocketFrame(.ping, payload: Data(count: 126)).encoded(mask: nil), .protocolError),
        ("a pong of 65,536 bytes", WebSocketFrame(.pong, payload: Data(count: 65_536)).encoded(mask: nil), .protocolError),
        ("a 64-bit length with its top bit set", Data([0x82, 127, 0x80, 0, 0, 0, 0, 0, 0, 1]), .protocolError),
    ]

    @Test("a frame the rules refuse fails with a protocol error and 1002", arguments: refused.indices)
    func refusedFrames(index: Int) {
        let (name, bytes, kind) = Self.refused[index]
        do {
            _ = try Self.parse(bytes)
            Issue.record("\(name) was accepted")
        } catch {
            #expect(error.kind == kind, "\(name)")
            #expect(error.closeCode == .protocolError, "\(name)")
        }
    }

    @Test("RSV1 on a message's first frame is allowed once compression is negotiated, never on a control frame or continuation")
    func compressionBit() throws {
        #expect(try Self.parse(Self.serverFrame(0xC1, [0x61]), compression: true).first?.isCompressed == true)
        #expect(throws: WebSocketFailure.self) { try Self.parse(Self.serverFrame(0xC9), compression: true) }
        #expect(throws: WebSocketFailure.self) { try Self.parse(Self.serverFrame(0xC0), compression: true) }
    }

    @Test("a frame over the limit fails at its header, before its payload arrives (1009)")
    func overLimitAtHeader() throws {
        // Only the ten header bytes of a frame announcing 2^40 bytes: refused at once.
        let header = Data([0x82, 127, 0, 0, 1, 0, 0, 0, 0, 0])
        var parser = FrameParser(role: .client, maximumFrameSize: 1 << 20)
        parser.append(header)
        #expect(throws: WebSocketFailure(.messageTooLarge, message: "a frame announces 1099511627776 bytes, over the limit of 1048576", closeCode: .messageTooBig)) {
            try parser.next()
        }
        // One byte over a small limit, the same.
        #expect(throws: WebSocketFailure.self) { try Self.parse(WebSocketFrame(.text, payload: Data(count: 11)).encoded(mask: nil), limit: 10) }
        #expect(try Self.parse(WebSocketFrame(.text, payload: Data(count: 10)).encoded(mask: nil), limit: 10).count == 1)
    }

    @Test("a server parser refuses an unmasked client frame")
    func serverRefusesUnmasked() {
        var parser = FrameParser(role: .server, maximumFrameSize: 100)
        parser.append(WebSocketFrame(.text, payload: Data("x".utf8)).encoded(mask: nil))
        #expect(throws: WebSocketFailure.self) { try parser.next() }
    }

    /// RFC 6455 §5.3: each frame a client sends has a fresh masking key from a strong source.
    /// The keys are drawn two from each 64 random bits and handed from writer to writer with the
    /// turn: 64 sends, read as raw bytes on the server's side, carry 64 different keys.
    @Test("every frame the client sends has a key of its own")
    func everyFrameHasItsOwnKey() async throws {
        let keys = Locked<[UInt32]>([])
        let server = Stub.switchingProtocols(
            Stub.Switch(
                headers: { request in
                    ["Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Accept": Handshake.accept(for: request.headers["Sec-WebSocket-Key"] ?? "")]
                },
                peer: { connection in
                    var bytes = Data()
                    // Each frame: two header bytes, a four-byte key, one payload byte.
                    var incoming = connection.incoming.makeAsyncIterator()
                    while bytes.count < 64 * 7, let chunk = try? await incoming.next() { bytes.append(chunk) }
                    let frames = Array(bytes.prefix(64 * 7))
                    keys.withLock { keys in
                        for start in stride(from: 0, to: frames.count, by: 7) {
                            #expect(frames[start + 1] == 0x81)  // masked, one byte
                            keys.append(frames[(start + 2)..<(start + 6)].reduce(0) { $0 << 8 | UInt32($1) })
                        }
                    }
                    connection.close()
                }))
        let executor = InMemoryExecutor(routes: [.init(.get, "/live", server)])
        let socket = try await executor.webSocket(.get |> url("wss://chat.test/live"))
        for _ in 0..<64 { try await socket.send(.text("x")) }
        _ = try? await socket.closed
        let seen = keys.withLock { $0 }
        #expect(seen.count == 64)
        #expect(Set(seen).count == 64)
    }
}
