/// Checks UTF-8 as it arrives, in pieces (RFC 3629: no overlong forms, no surrogates, nothing
/// above U+10FFFF), so that a text message split across frames is judged as a whole and an
/// invalid one fails at its first bad byte rather than after the whole message is buffered.
struct UTF8Validation: Sendable, Equatable {
    /// Continuation bytes still expected for the current character.
    private var needed = 0
    /// The range the next continuation byte must fall in (narrower after some lead bytes).
    private var low: UInt8 = 0x80
    private var high: UInt8 = 0xBF

    /// Whether the bytes so far end on a character boundary.
    var isComplete: Bool { needed == 0 }

    /// Takes `bytes`; `false` at the first byte that cannot be UTF-8 (the state is then spent).
    mutating func take(_ bytes: some Sequence<UInt8>) -> Bool {
        // Contiguous bytes (`Data`, arrays) are read in place, runs of ASCII eight bytes at a
        // time; anything else byte by byte.
        if let valid = bytes.withContiguousStorageIfAvailable({ take(contiguous: UnsafeRawBufferPointer($0)) }) { return valid }
        for byte in bytes where !take(byte) { return false }
        return true
    }

    private mutating func take(contiguous bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        let count = bytes.count
        while index < count {
            if needed == 0 {
                while index + 8 <= count, bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                    index += 8
                }
                guard index < count else { break }
            }
            guard take(bytes[index]) else { return false }
            index += 1
        }
        return true
    }

    /// Takes one byte; `false` if it cannot come next.
    @inline(__always)
    private mutating func take(_ byte: UInt8) -> Bool {
        guard needed == 0 else {
            guard byte >= low, byte <= high else { return false }
            needed -= 1
            (low, high) = (0x80, 0xBF)
            return true
        }
        switch byte {
        case 0x00...0x7F: break
        case 0xC2...0xDF: (needed, low, high) = (1, 0x80, 0xBF)
        case 0xE0: (needed, low, high) = (2, 0xA0, 0xBF)
        case 0xE1...0xEC, 0xEE...0xEF: (needed, low, high) = (2, 0x80, 0xBF)
        case 0xED: (needed, low, high) = (2, 0x80, 0x9F)
        case 0xF0: (needed, low, high) = (3, 0x90, 0xBF)
        case 0xF1...0xF3: (needed, low, high) = (3, 0x80, 0xBF)
        case 0xF4: (needed, low, high) = (3, 0x80, 0x8F)
        default: return false
        }
        return true
    }

    /// Whether `bytes` are whole, valid UTF-8.
    static func isValid(_ bytes: some Sequence<UInt8>) -> Bool {
        var validation = UTF8Validation()
        return validation.take(bytes) && validation.isComplete
    }
}
