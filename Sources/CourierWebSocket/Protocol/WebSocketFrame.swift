import CourierCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The kind of a WebSocket frame (RFC 6455 §5.2); the others are reserved.
package enum WebSocketOpcode: UInt8, Sendable {
    case continuation = 0x0
    case text = 0x1
    case binary = 0x2
    case close = 0x8
    case ping = 0x9
    case pong = 0xA

    /// Close, ping and pong: at most 125 bytes, never fragmented, allowed between fragments.
    package var isControl: Bool { rawValue >= 0x8 }
}

/// One WebSocket frame (RFC 6455 §5.2), unmasked: what the parser hands over and what a writer
/// encodes.
package struct WebSocketFrame: Sendable, Equatable {
    /// Whether this is the last frame of its message (FIN).
    package var isFinal: Bool
    /// RSV1: the message is compressed (RFC 7692), on its first frame only.
    package var isCompressed: Bool
    /// The frame's kind.
    package var opcode: WebSocketOpcode
    /// The application data, unmasked.
    package var payload: Data

    /// A frame.
    package init(_ opcode: WebSocketOpcode, payload: Data = Data(), isFinal: Bool = true, isCompressed: Bool = false) {
        self.opcode = opcode
        self.payload = payload
        self.isFinal = isFinal
        self.isCompressed = isCompressed
    }

    /// The frame as it goes on the wire: masked with `mask` when one is given (a client masks
    /// every frame, RFC 6455 §5.3; a server never does; the key's bytes go out most significant
    /// first), its length in the shortest form. Written once, into the buffer that is returned.
    package func encoded(mask: UInt32?) -> Data {
        var wire = Data(count: Self.wireCount(payload: payload.count, masked: mask != nil))
        wire.withUnsafeMutableBytes { encode(into: $0, mask: mask) }
        return wire
    }

    /// Writes the frame as ``encoded(mask:)`` returns it into `wire`, which holds exactly
    /// ``wireCount(payload:masked:)`` bytes.
    package func encode(into wire: UnsafeMutableRawBufferPointer, mask: UInt32?) {
        payload.withUnsafeBytes { payload in
            Self.encode(opcode, isFinal: isFinal, isCompressed: isCompressed, payload: payload, mask: mask, into: wire)
        }
    }

    /// How many bytes a frame with `payload` bytes of application data takes on the wire.
    package static func wireCount(payload count: Int, masked: Bool) -> Int {
        2 + (count < 126 ? 0 : count <= 0xFFFF ? 2 : 8) + (masked ? 4 : 0) + count
    }

    /// Writes a frame of `payload` into `wire` (exactly ``wireCount(payload:masked:)`` bytes):
    /// the header, then the payload, masked with `mask` as it is copied when one is given.
    package static func encode(
        _ opcode: WebSocketOpcode, isFinal: Bool = true, isCompressed: Bool = false, payload: UnsafeRawBufferPointer, mask: UInt32?,
        into wire: UnsafeMutableRawBufferPointer
    ) {
        let count = payload.count
        let lengthBytes = count < 126 ? 0 : count <= 0xFFFF ? 2 : 8
        let headerLength = 2 + lengthBytes + (mask == nil ? 0 : 4)
        // A buffer of the wrong size is a transport's mistake: nothing is written past it.
        guard wire.count == headerLength + count else { return }
        wire[0] = (isFinal ? 0x80 : 0) | (isCompressed ? 0x40 : 0) | opcode.rawValue
        let lengthCode: UInt8 = lengthBytes == 0 ? UInt8(count) : lengthBytes == 2 ? 126 : 127
        wire[1] = (mask == nil ? 0 : 0x80) | lengthCode
        for index in 0..<lengthBytes {
            wire[2 + index] = UInt8(truncatingIfNeeded: UInt64(count) >> UInt64(8 * (lengthBytes - 1 - index)))
        }
        if let mask {
            for index in 0..<4 { wire[2 + lengthBytes + index] = UInt8(truncatingIfNeeded: mask >> UInt32(24 - 8 * index)) }
        }
        let body = UnsafeMutableRawBufferPointer(rebasing: wire[headerLength...])
        if let source = payload.baseAddress, count > 0, let target = body.baseAddress {
            target.copyMemory(from: source, byteCount: count)
        }
        if let mask { Self.mask(body, key: mask) }
    }

    /// XORs `buffer` with the 4-byte masking `key` (its most significant byte first, as on the
    /// wire), in place: masking and unmasking are the same.
    package static func mask(_ buffer: UnsafeMutableRawBufferPointer, key: UInt32) {
        let bytes = (
            UInt8(truncatingIfNeeded: key >> 24), UInt8(truncatingIfNeeded: key >> 16), UInt8(truncatingIfNeeded: key >> 8),
            UInt8(truncatingIfNeeded: key)
        )
        // Eight bytes of the key repeated, in memory order: the same whatever the byte order.
        let pattern = (bytes.0, bytes.1, bytes.2, bytes.3, bytes.0, bytes.1, bytes.2, bytes.3)
        let word = withUnsafeBytes(of: pattern) { $0.loadUnaligned(as: UInt64.self) }
        var index = 0
        let end = buffer.count
        while end - index >= 8 {
            buffer.storeBytes(of: buffer.loadUnaligned(fromByteOffset: index, as: UInt64.self) ^ word, toByteOffset: index, as: UInt64.self)
            index += 8
        }
        // What is left (under eight bytes) starts at a multiple of four: byte i takes key byte i % 4.
        while index < end {
            buffer[index] ^= UInt8(truncatingIfNeeded: key >> UInt32(24 - 8 * (index & 3)))
            index += 1
        }
    }
}
