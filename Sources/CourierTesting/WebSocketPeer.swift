import CourierCore
import CourierWebSocket

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension Stub {
    /// A WebSocket server in memory: answers the opening handshake (the right
    /// `Sec-WebSocket-Accept`, the subprotocol given) and runs `script` as the server, so a test
    /// needs no network.
    ///
    /// ```swift
    /// let chat = InMemoryExecutor(routes: [
    ///     .init(.get, "/live", .webSocket { peer in
    ///         while let message = try await peer.receiveMessage() { try await peer.send(message) }  // echo
    ///     }),
    /// ])
    /// let socket = try await chat.webSocket(.get |> url("wss://chat.test/live"))
    /// ```
    /// - Parameters:
    ///   - subprotocol: The subprotocol the server chooses, if any.
    ///   - headers: More headers for the `101`.
    ///   - compression: Whether the server accepts permessage-deflate (RFC 7692) when the client
    ///     offers it; the peer then inflates what the client compressed
    ///     (``WebSocketPeer/receiveMessage()``) and may compress what it sends
    ///     (``WebSocketPeer/send(_:compressed:)``). `false` by default.
    ///   - script: The server's side; the connection is dropped when it returns or throws, so a
    ///     script that means to close cleanly calls ``WebSocketPeer/close(_:reason:)`` first.
    /// - Returns: The stub.
    public static func webSocket(
        subprotocol: String? = nil, headers: HTTPHeaders = [:], compression: Bool = false,
        _ script: @escaping @Sendable (WebSocketPeer) async throws -> Void
    ) -> Stub {
        .switchingProtocols(
                Switch(
                    headers: { request in
                        var answer = headers
                        answer.set("Upgrade", "websocket")
                        answer.set("Connection", "Upgrade")
                        answer.set("Sec-WebSocket-Accept", Handshake.accept(for: request.headers["Sec-WebSocket-Key"] ?? ""))
                        if let subprotocol { answer.set("Sec-WebSocket-Protocol", subprotocol) }
                        let offered = request.headers["Sec-WebSocket-Extensions"].map { $0.contains("permessage-deflate") } ?? false
                        if compression, offered { answer.set("Sec-WebSocket-Extensions", "permessage-deflate") }
                        return answer
                    },
                    peer: { connection in try? await script(WebSocketPeer(connection, compression: compression)) }))
    }
}

/// The server's side of an in-memory WebSocket (``Stub/webSocket(subprotocol:headers:compression:_:)``): what
/// the client sent, frame by frame or message by message, and anything a server may send,
/// including what no server should (masked frames, reserved bits, bad UTF-8, raw bytes), to see
/// how the client takes it.
public actor WebSocketPeer {
    /// A frame the client sent, unmasked.
    public struct Frame: Sendable, Hashable {
        /// The opcode: `0` continuation, `1` text, `2` binary, `8` close, `9` ping, `10` pong.
        public var opcode: UInt8
        /// The payload, unmasked.
        public var payload: Data
        /// Whether it ends its message (FIN).
        public var isFinal: Bool
        /// Whether it starts a compressed message (RSV1, RFC 7692).
        public var isCompressed = false

        /// The close code of a close frame, if it has one.
        public var closeCode: WebSocketCloseCode? {
            guard opcode == 0x8, payload.count >= 2 else { return nil }
            return WebSocketCloseCode(rawValue: UInt16(payload[payload.startIndex]) << 8 | UInt16(payload[payload.startIndex + 1]))
        }
    }

    private let connection: UpgradedPeer
    private var iterator: ByteStream.Iterator
    private var parser: FrameParser
    private var inflater = Inflater()
    /// Whether the peer accepts permessage-deflate (when the client offers it): it reads RSV1
    /// and inflates the client's compressed messages.
    public let isCompressing: Bool

    init(_ connection: UpgradedPeer, compression: Bool = false) {
        self.connection = connection
        self.iterator = connection.incoming.makeAsyncIterator()
        self.isCompressing = compression
        self.parser = FrameParser(role: .server, maximumFrameSize: 1 << 30, allowsCompression: compression)
    }

    /// The next frame from the client, or `nil` when it closed the connection.
    /// - Throws: A ``WebSocketFailure`` for a frame a server must refuse (an unmasked one).
    public func receiveFrame() async throws -> Frame? {
        while true {
            if let frame = try parser.next() {
                return Frame(opcode: frame.opcode.rawValue, payload: frame.payload, isFinal: frame.isFinal, isCompressed: frame.isCompressed)
            }
            var reading = iterator
            let chunk = try await reading.next(isolation: self)
            iterator = reading
            guard let chunk else { return nil }
            parser.append(chunk)
        }
    }

    /// The next whole message from the client (inflated, when it was compressed), answering its
    /// pings on the way; `nil` when it closed: its close frame is answered with the same code and
    /// the connection closed.
    /// - Throws: A ``WebSocketFailure`` for a frame a server must refuse, or a compressed message
    ///   that does not inflate.
    public func receiveMessage() async throws -> WebSocketMessage? {
        var kind: UInt8?
        var compressed = false
        var data = Data()
        while let frame = try await receiveFrame() {
            switch frame.opcode {
            case 0x9:
                try await send(frame: 0xA, payload: frame.payload)
            case 0x8:
                try await send(frame: 0x8, payload: frame.payload.prefix(2))
                connection.close()
                return nil
            case 0xA:
                continue
            default:
                if frame.opcode != 0 { (kind, compressed) = (frame.opcode, frame.isCompressed) }
                data.append(frame.payload)
                guard frame.isFinal else { continue }
                if compressed {
                    // The window runs across the client's messages (it may take the context
                    // over); a message compressed on its own never refers to it.
                    guard let inflated = try? inflater.inflate([UInt8](data) + [0, 0, 0xFF, 0xFF], limit: 1 << 30, keepsWindow: true) else {
                        throw WebSocketFailure(.protocolError, message: "the client's compressed message does not inflate")
                    }
                    data = Data(inflated)
                }
                return kind == 0x1 ? .text(String(decoding: data, as: UTF8.self)) : .binary(data)
            }
        }
        return nil
    }

    /// Sends a message as one frame, compressed when asked (and permessage-deflate was
    /// negotiated, else the frame breaks the protocol, which may be the point).
    /// - Parameters:
    ///   - message: The message.
    ///   - compressed: Whether to compress it (RSV1); `false` by default.
    public func send(_ message: WebSocketMessage, compressed: Bool = false) async throws {
        let (opcode, payload): (UInt8, Data) =
            switch message {
            case .text(let text): (0x1, Data(text.utf8))
            case .binary(let data): (0x2, data)
            }
        guard compressed else { return try await send(frame: opcode, payload: payload) }
        try await send(frame: opcode, payload: Data(Deflater.compress([UInt8](payload))), reservedBits: 0b100)
    }

    /// Sends one frame as given, however wrong: any opcode, the FIN and RSV bits, masked or
    /// not (a server never masks), a payload of any length (control frames included).
    /// - Parameters:
    ///   - opcode: The opcode (4 bits).
    ///   - payload: The payload.
    ///   - isFinal: FIN; `true` by default.
    ///   - reservedBits: RSV1–3 as the top three of four bits (`0b100` is RSV1); `0` by default.
    ///   - masked: Whether to mask it; `false` by default.
    public func send(frame opcode: UInt8, payload: Data = Data(), isFinal: Bool = true, reservedBits: UInt8 = 0, masked: Bool = false)
        async throws
    {
        var frame = WebSocketFrame(.binary, payload: payload, isFinal: isFinal).encoded(mask: masked ? 0x3779_5A11 : nil)
        frame[frame.startIndex] = (isFinal ? 0x80 : 0) | (reservedBits & 0x7) << 4 | (opcode & 0x0F)
        try await sendRaw(frame)
    }

    /// Sends bytes as they are, framed or not.
    /// - Parameter bytes: The bytes.
    public func sendRaw(_ bytes: Data) async throws {
        guard await connection.write(bytes) else {
            throw CourierError(.transport(TransportFailure(.connectionLost, message: "the client closed the connection")))
        }
    }

    /// Sends a close frame (without a code when `code` is `nil`); the client's answer is read
    /// with ``receiveFrame()``.
    /// - Parameters:
    ///   - code: The close code, or `nil` for none.
    ///   - reason: The reason.
    public func close(_ code: WebSocketCloseCode? = .normalClosure, reason: String = "") async throws {
        var payload = Data()
        if let code { payload = Data([UInt8(code.rawValue >> 8), UInt8(truncatingIfNeeded: code.rawValue)]) + Data(reason.utf8) }
        try await send(frame: 0x8, payload: payload)
    }

    /// Closes the connection without a close frame (a TCP close).
    public func drop() {
        connection.close()
    }
}
