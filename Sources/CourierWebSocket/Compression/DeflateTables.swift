/// The length and distance codes of RFC 1951 §3.2.5, which the inflater reads and the deflater
/// writes: for each code, the least value it stands for and how many extra bits follow it.
enum DeflateTables {
    /// Length codes 257…285, from 0: their least length.
    static let lengthBase = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258]
    /// Length codes 257…285, from 0: their extra bits.
    static let lengthExtra = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
    /// Distance codes 0…29: their least distance.
    static let distanceBase = [
        1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193,
        12289, 16385, 24577,
    ]
    /// Distance codes 0…29: their extra bits.
    static let distanceExtra = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13]

    /// `code`'s low `length` bits in the other order: DEFLATE sends a Huffman code from its most
    /// significant bit, into a stream read from the least.
    static func reversed(_ code: Int, _ length: Int) -> UInt16 {
        reversed(code, length, table: reversedBytes)
    }

    /// ``reversed(_:_:)`` with ``reversedBytes`` in hand (a loop takes it once).
    @inline(__always)
    static func reversed(_ code: Int, _ length: Int, table: [UInt8]) -> UInt16 {
        guard length > 0 else { return 0 }
        let both = UInt32(table[code & 0xFF]) << 8 | UInt32(table[(code >> 8) & 0xFF])
        return UInt16(truncatingIfNeeded: both >> (16 - length))
    }

    /// Each byte with its bits in the other order.
    static let reversedBytes: [UInt8] = (0..<256).map { byte in
        var result = 0
        for bit in 0..<8 where byte & (1 << bit) != 0 { result |= 1 << (7 - bit) }
        return UInt8(result)
    }
}
