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
    /// every frame, RFC 6455 §5.3; a server never does), its length in the shortest form.
    package func encoded(mask: UInt32?) -> Data {
        let count = payload.count
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 14)
        bytes.append((isFinal ? 0x80 : 0) | (isCompressed ? 0x40 : 0) | opcode.rawValue)
        let maskBit: UInt8 = mask == nil ? 0 : 0x80
        if count < 126 {
            bytes.append(maskBit | UInt8(count))
        } else if count <= 0xFFFF {
            bytes.append(maskBit | 126)
            bytes.append(UInt8(count >> 8))
            bytes.append(UInt8(truncatingIfNeeded: count))
        } else {
            bytes.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: UInt64(count) >> UInt64(shift))) }
        }
        guard let mask else {
            bytes.append(contentsOf: payload)
            return Data(bytes)
        }
        let key = [UInt8(mask >> 24), UInt8(truncatingIfNeeded: mask >> 16), UInt8(truncatingIfNeeded: mask >> 8), UInt8(truncatingIfNeeded: mask)]
        bytes.append(contentsOf: key)
        let start = bytes.count
        bytes.append(contentsOf: payload)
        bytes.withUnsafeMutableBufferPointer { buffer in Self.mask(buffer, from: start, key: key) }
        return Data(bytes)
    }

    /// XORs `buffer[start...]` with the 4-byte `key`, in place (masking and unmasking are the same).
    package static func mask(_ buffer: UnsafeMutableBufferPointer<UInt8>, from start: Int, key: [UInt8]) {
        var index = start
        let end = buffer.count
        let wide = UInt64(key[0]) | UInt64(key[1]) << 8 | UInt64(key[2]) << 16 | UInt64(key[3]) << 24
        let word = wide | wide << 32
        if let base = buffer.baseAddress {
            while end - index >= 8 {
                let raw = UnsafeMutableRawPointer(base + index)
                raw.storeBytes(of: raw.loadUnaligned(as: UInt64.self) ^ word, as: UInt64.self)
                index += 8
            }
        }
        var keyIndex = (index - start) & 3
        while index < end {
            buffer[index] ^= key[keyIndex]
            keyIndex = (keyIndex + 1) & 3
            index += 1
        }
    }
}
