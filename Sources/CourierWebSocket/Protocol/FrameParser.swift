import CourierCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Cuts a byte stream into WebSocket frames (RFC 6455 §5.2), checking each header before its
/// payload is buffered: a frame the rules refuse, or one over ``maximumFrameSize``, fails at its
/// header, so a hostile peer cannot make the parser hold more than one frame's worth of bytes.
///
/// What a client must refuse (``Role/client``): a masked frame, reserved bits it did not
/// negotiate (RSV1 without compression, RSV2, RSV3), RSV1 on a control frame or a continuation,
/// an unknown opcode, a control frame longer than 125 bytes or fragmented, a length whose top bit
/// is set. A server (``Role/server``, the in-memory peer) refuses unmasked frames instead.
package struct FrameParser: Sendable {
    /// Which side's frames are parsed.
    package enum Role: Sendable {
        /// The client's parser: the server's frames, never masked.
        case client
        /// The server's parser: the client's frames, always masked.
        case server
    }

    private let role: Role
    /// The longest payload a frame may announce.
    package var maximumFrameSize: Int
    /// Whether RSV1 (a compressed message, RFC 7692) was negotiated.
    package var allowsCompression: Bool
    private var buffer: [UInt8] = []
    private var start = 0

    /// A parser for `role`'s peer.
    package init(role: Role, maximumFrameSize: Int, allowsCompression: Bool = false) {
        self.role = role
        self.maximumFrameSize = max(0, maximumFrameSize)
        self.allowsCompression = allowsCompression
    }

    /// Bytes that arrived and are not yet part of a whole frame.
    package var bufferedCount: Int { buffer.count - start }

    /// Adds the next bytes of the stream.
    package mutating func append(_ chunk: some Sequence<UInt8>) {
        compact()
        buffer.append(contentsOf: chunk)
    }

    /// Adds the next bytes of the stream, copied from the chunk's storage in one move (not byte
    /// by byte through `Data`'s iterator).
    package mutating func append(_ chunk: Data) {
        compact()
        chunk.withUnsafeBytes { buffer.append(contentsOf: $0) }
    }

    /// Drops the bytes of frames already taken, once they are half of the buffer.
    private mutating func compact() {
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        } else if start > 0, start >= buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
    }

    /// The next whole frame, or `nil` until more bytes arrive.
    /// - Throws: ``WebSocketFailure`` with the close code to send, for a frame the rules refuse.
    package mutating func next() throws(WebSocketFailure) -> WebSocketFrame? {
        let available = buffer.count - start
        guard available >= 2 else { return nil }
        let first = buffer[start]
        let second = buffer[start + 1]
        let isFinal = first & 0x80 != 0
        let rsv1 = first & 0x40 != 0
        guard first & 0x30 == 0 else { throw Self.violation("a frame set reserved bits RSV2 or RSV3, which no extension negotiated") }
        guard let opcode = WebSocketOpcode(rawValue: first & 0x0F) else {
            throw Self.violation("a frame has the reserved opcode \(first & 0x0F)")
        }
        if rsv1 {
            guard allowsCompression else { throw Self.violation("a frame set reserved bit RSV1, but no compression was negotiated") }
            guard !opcode.isControl, opcode != .continuation else {
                throw Self.violation("a \(opcode == .continuation ? "continuation" : "control") frame set RSV1 (compression marks a message's first frame only)")
            }
        }
        let masked = second & 0x80 != 0
        switch role {
        case .client where masked: throw Self.violation("the server sent a masked frame")
        case .server where !masked: throw Self.violation("the client sent an unmasked frame")
        default: break
        }
        var headerLength = 2
        var length = UInt64(second & 0x7F)
        if length == 126 {
            guard available >= 4 else { return nil }
            length = UInt64(buffer[start + 2]) << 8 | UInt64(buffer[start + 3])
            headerLength = 4
        } else if length == 127 {
            guard available >= 10 else { return nil }
            length = 0
            for offset in 2..<10 { length = length << 8 | UInt64(buffer[start + offset]) }
            guard length >> 63 == 0 else { throw Self.violation("a frame's 64-bit length has its top bit set") }
            headerLength = 10
        }
        if opcode.isControl {
            guard isFinal else { throw Self.violation("a \(opcode) frame is fragmented (control frames never are)") }
            guard length <= 125 else { throw Self.violation("a \(opcode) frame carries \(length) bytes (control frames carry at most 125)") }
        }
        guard length <= UInt64(maximumFrameSize) else {
            throw WebSocketFailure(
                .messageTooLarge, message: "a frame announces \(length) bytes, over the limit of \(maximumFrameSize)",
                closeCode: .messageTooBig)
        }
        let maskLength = masked ? 4 : 0
        let total = headerLength + maskLength + Int(length)
        guard available >= total else { return nil }
        let payloadStart = start + headerLength + maskLength
        var payload = Data(buffer[payloadStart..<(start + total)])
        if masked {
            let keyStart = start + headerLength
            let key = UInt32(buffer[keyStart]) << 24 | UInt32(buffer[keyStart + 1]) << 16 | UInt32(buffer[keyStart + 2]) << 8 | UInt32(buffer[keyStart + 3])
            payload.withUnsafeMutableBytes { WebSocketFrame.mask($0, key: key) }
        }
        start += total
        return WebSocketFrame(opcode, payload: payload, isFinal: isFinal, isCompressed: rsv1)
    }

    private static func violation(_ message: String) -> WebSocketFailure {
        WebSocketFailure(.protocolError, message: message, closeCode: .protocolError)
    }
}
