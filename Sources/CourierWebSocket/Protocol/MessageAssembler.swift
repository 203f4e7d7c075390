import CourierCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Puts frames back together into messages (RFC 6455 §5.4) and reads control frames, holding the
/// rules a receiver must: a continuation only after an unfinished message, no new message before
/// it ends, text that is UTF-8 (checked as each fragment arrives, so a bad byte fails at once),
/// at most ``maximumMessageSize`` bytes a message (counted before any are kept), and close frames
/// with a code that may be sent and a UTF-8 reason. A compressed message (RFC 7692: RSV1 on its
/// first frame) is counted against the limit as it arrives and again as it inflates, and its text
/// is checked once inflated.
package struct MessageAssembler: Sendable {
    /// What a frame amounted to.
    package enum Event: Sendable, Equatable {
        /// A whole message.
        case message(WebSocketMessage)
        /// A ping, with its payload (to be echoed in a pong).
        case ping(Data)
        /// A pong, with its payload.
        case pong(Data)
        /// The peer's close frame: its code (`nil` when it sent none) and reason.
        case close(WebSocketCloseCode?, String)
    }

    /// The most bytes a message may have.
    package var maximumMessageSize: Int
    private var opcode: WebSocketOpcode?
    private var parts = Data()
    private var validation = UTF8Validation()
    /// Whether the message being put together is compressed.
    private var compressed = false
    /// What the server accepted of compression, and the window of its earlier messages.
    private let compression: NegotiatedCompression?
    private var inflater = Inflater()

    /// An assembler for messages of at most `maximumMessageSize` bytes, inflating compressed ones
    /// when compression was negotiated.
    package init(maximumMessageSize: Int, compression: NegotiatedCompression? = nil) {
        self.maximumMessageSize = max(0, maximumMessageSize)
        self.compression = compression
    }

    /// Whether taking `frame` inflates a compressed message of at least `bytes` bytes on the
    /// wire (the frame ends one, and it and the parts before it come to that many).
    package func inflates(_ frame: WebSocketFrame, atLeast bytes: Int) -> Bool {
        guard frame.isFinal, compression != nil, parts.count + frame.payload.count >= bytes else { return false }
        switch frame.opcode {
        case .continuation: return compressed
        case .text, .binary: return frame.isCompressed
        default: return false
        }
    }

    /// Takes the next frame; returns what it completed, if anything.
    /// - Throws: ``WebSocketFailure`` with the close code to send.
    package mutating func take(_ frame: WebSocketFrame) throws(WebSocketFailure) -> Event? {
        switch frame.opcode {
        case .ping: return .ping(frame.payload)
        case .pong: return .pong(frame.payload)
        case .close: return try Self.close(frame.payload)
        case .continuation:
            guard opcode != nil else { throw Self.violation("a continuation frame arrived with no fragmented message to continue") }
        case .text, .binary:
            guard opcode == nil else { throw Self.violation("a new \(frame.opcode) message began before the fragmented one ended") }
            opcode = frame.opcode
            // The parser lets RSV1 through only on a first frame, and only when negotiated.
            guard !frame.isCompressed || compression != nil else { throw Self.violation("a compressed message, but no compression was negotiated") }
            compressed = frame.isCompressed
        }
        guard parts.count + frame.payload.count <= maximumMessageSize else {
            throw WebSocketFailure(
                .messageTooLarge, message: "a message grew past the limit of \(maximumMessageSize) bytes", closeCode: .messageTooBig)
        }
        if opcode == .text, !compressed, !validation.take(frame.payload) { throw Self.notUTF8("a text message") }
        guard frame.isFinal else {
            parts.append(frame.payload)
            return nil
        }
        let kind = opcode
        var data = parts.isEmpty ? frame.payload : parts + frame.payload
        opcode = nil
        parts = Data()
        defer { validation = UTF8Validation() }
        if compressed {
            compressed = false
            data = try inflate(data)
            if kind == .text, !validation.take(data) { throw Self.notUTF8("a text message") }
        }
        guard kind == .text else { return .message(.binary(data)) }
        guard validation.isComplete else { throw Self.notUTF8("a text message") }
        return .message(.text(String(decoding: data, as: UTF8.self)))
    }

    /// A compressed message's payload inflated (RFC 7692 §7.2.2), at most the message limit.
    private mutating func inflate(_ payload: Data) throws(WebSocketFailure) -> Data {
        var input = [UInt8](payload)
        input.append(contentsOf: [0x00, 0x00, 0xFF, 0xFF])
        do {
            let keepsWindow = compression?.serverNoContextTakeover == false
            return try inflater.inflate(input, limit: maximumMessageSize, keepsWindow: keepsWindow) { Data($0) }
        } catch {
            switch error {
            case .tooLarge:
                throw WebSocketFailure(
                    .messageTooLarge, message: "a compressed message inflates past the limit of \(maximumMessageSize) bytes",
                    closeCode: .messageTooBig)
            case .truncated:
                throw Self.corrupt("it ends inside a DEFLATE block")
            case .corrupt(let reason):
                throw Self.corrupt(reason)
            }
        }
    }

    private static func corrupt(_ reason: String) -> WebSocketFailure {
        WebSocketFailure(.protocolError, message: "a compressed message does not inflate: \(reason)", closeCode: .invalidPayload)
    }

    /// Reads a close frame's payload: empty, or a code that may be sent and a UTF-8 reason.
    private static func close(_ payload: Data) throws(WebSocketFailure) -> Event {
        guard !payload.isEmpty else { return .close(nil, "") }
        guard payload.count >= 2 else { throw violation("a close frame carries one byte (a close code takes two)") }
        let bytes = [UInt8](payload)
        let code = WebSocketCloseCode(rawValue: UInt16(bytes[0]) << 8 | UInt16(bytes[1]))
        guard code.mayBeSent else { throw violation("a close frame carries the code \(code.rawValue), which may not be sent") }
        let reason = bytes[2...]
        guard UTF8Validation.isValid(reason) else { throw notUTF8("a close reason") }
        return .close(code, String(decoding: reason, as: UTF8.self))
    }

    private static func violation(_ message: String) -> WebSocketFailure {
        WebSocketFailure(.protocolError, message: message, closeCode: .protocolError)
    }

    private static func notUTF8(_ what: String) -> WebSocketFailure {
        WebSocketFailure(.invalidUTF8, message: "\(what) is not valid UTF-8", closeCode: .invalidPayload)
    }
}
