/// Raw DEFLATE decoding (RFC 1951), in Swift so the library needs no zlib: what permessage-deflate
/// (RFC 7692) needs of it. One call inflates one message whole; the last 32 KiB of what earlier
/// messages inflated to stay as the window later ones may refer back to (context takeover).
///
/// Every rule zlib holds a stream to is held here (the fuzz target `WebSocketInflate` checks the
/// two agree byte for byte): stored lengths that match their complement, no block type 3, no code
/// set over-subscribed or incomplete (but for a lone one-bit code), an end-of-block code in every
/// literal/length set, no repeat before a first length or past the end, no reserved codes, no
/// distance further back than the bytes there are. Output stops at the limit, before the bytes
/// past it are written, so a small input that inflates to gigabytes costs no more than the limit.
package struct Inflater: Sendable {
    /// Why inflating failed.
    package enum Failure: Error, Sendable, Equatable {
        /// The input breaks RFC 1951; says how.
        case corrupt(String)
        /// The input ends inside a block.
        case truncated
        /// The output would pass the limit.
        case tooLarge
    }

    /// The most bytes a back-reference reaches (RFC 1951 §2.5: 32 KiB).
    package static let windowSize = 32 << 10
    /// Earlier output, whose last 32 KiB a message may refer back to. It is kept as the buffer the
    /// next message is written after, and cut back to the window (into a buffer of its own, so a
    /// large message's memory goes) only once it holds twice that: a small message costs no copy
    /// of the window, and the bytes copied stay at most one per byte inflated.
    private var history: [UInt8] = []

    /// How many bytes of earlier output are kept (at most twice the window).
    package var keptBytes: Int { history.count }

    /// An inflater with an empty window.
    package init() {}

    /// Forgets the window (a peer that takes no context over between messages).
    package mutating func reset() { history = [] }

    /// Inflates `input` (a message's payload with `00 00 FF FF` appended, RFC 7692 §7.2.2): the
    /// blocks up to the one marked final or to the input's end, which must fall between blocks.
    /// - Parameters:
    ///   - limit: The most bytes the output may have.
    ///   - keepsWindow: Whether the output's last 32 KiB stay for the next message.
    /// - Throws: ``Failure``.
    package mutating func inflate(_ input: [UInt8], limit: Int, keepsWindow: Bool) throws(Failure) -> [UInt8] {
        try inflate(input, limit: limit, keepsWindow: keepsWindow) { Array($0) }
    }

    /// Inflates `input` as ``inflate(_:limit:keepsWindow:)`` does, and hands the message to
    /// `message` where it was written (after the window), so the caller makes the one copy it
    /// keeps (a `Data`, a `String`), not a second.
    package mutating func inflate<Message>(
        _ input: [UInt8], limit: Int, keepsWindow: Bool, _ message: (ArraySlice<UInt8>) -> Message
    ) throws(Failure) -> Message {
        var buffer: [UInt8] = []
        swap(&buffer, &history)
        var decoder = Decoder(input: input, window: consume buffer, limit: max(0, limit))
        try decoder.run()
        let result = message(decoder.output[decoder.start...])
        guard keepsWindow else { return result }
        if decoder.output.count > 2 * Self.windowSize {
            history = Array(decoder.output.suffix(Self.windowSize))
        } else {
            swap(&history, &decoder.output)
        }
        return result
    }
}

/// One message's decoding: the bit reader and the blocks.
private struct Decoder {
    let input: [UInt8]
    var position = 0
    var bits: UInt64 = 0
    var count = 0
    /// Earlier output (the window at its end), then this message's bytes from ``start``.
    var output: [UInt8]
    let start: Int
    let limit: Int

    init(input: [UInt8], window: consuming [UInt8], limit: Int) {
        self.input = input
        self.start = window.count
        self.limit = limit
        self.output = window
        output.reserveCapacity(start + min(limit, max(input.count * 4, 1024)))
    }

    mutating func run() throws(Inflater.Failure) {
        while true {
            let header = try take(3)
            let isFinal = header & 1 == 1
            switch header >> 1 {
            case 0: try stored()
            case 1: try codes(Huffman.fixedLengths, Huffman.fixedDistances)
            case 2:
                let (lengths, distances) = try dynamicTables()
                try codes(lengths, distances)
            default: throw .corrupt("a block of the reserved type 3")
            }
            refill()
            if isFinal || (count == 0 && position == input.count) { return }
        }
    }

    // MARK: Bits

    mutating func refill() {
        while count <= 56, position < input.count {
            bits |= UInt64(input[position]) << UInt64(count)
            position += 1
            count += 8
        }
    }

    mutating func take(_ needed: Int) throws(Inflater.Failure) -> Int {
        if count < needed {
            refill()
            guard count >= needed else { throw .truncated }
        }
        let value = Int(truncatingIfNeeded: bits & ((1 << UInt64(needed)) - 1))
        bits >>= UInt64(needed)
        count -= needed
        return value
    }

    /// Decodes one symbol of `code`.
    mutating func decode(_ code: Huffman) throws(Inflater.Failure) -> Int {
        if count < Huffman.fastBits { refill() }
        let entry = Int(code.fast[Int(truncatingIfNeeded: bits) & (Huffman.fastSize - 1)])
        let length = entry >> 9
        if length != 0, length <= count {
            bits >>= UInt64(length)
            count -= length
            return entry & 0x1FF
        }
        // A code longer than the table, or one near the input's end: walk the canonical code
        // a bit at a time (RFC 1951 §3.2.2: codes of one length are consecutive).
        refill()
        var value = 0, first = 0, index = 0
        for length in stride(from: 1, through: code.longest, by: 1) {
            guard length <= count else { throw .truncated }
            value |= Int(truncatingIfNeeded: (bits >> UInt64(length - 1)) & 1)
            let number = Int(code.counts[length])
            if value - first < number {
                bits >>= UInt64(length)
                count -= length
                return Int(code.symbols[index + value - first])
            }
            index += number
            first = (first + number) << 1
            value <<= 1
        }
        throw .corrupt("a bit pattern that is no code of the block")
    }

    // MARK: Blocks

    mutating func stored() throws(Inflater.Failure) {
        _ = try take(count & 7)
        let length = try take(16)
        let complement = try take(16)
        guard length == complement ^ 0xFFFF else { throw .corrupt("a stored block whose length does not match its complement") }
        // What the bit buffer holds is whole bytes of the input: hand them back.
        position -= count / 8
        bits = 0
        count = 0
        guard input.count - position >= length else { throw .truncated }
        guard output.count - start + length <= limit else { throw .tooLarge }
        output.append(contentsOf: input[position..<(position + length)])
        position += length
    }

    mutating func codes(_ lengths: Huffman, _ distances: Huffman) throws(Inflater.Failure) {
        while true {
            let symbol = try decode(lengths)
            if symbol < 256 {
                guard output.count - start < limit else { throw .tooLarge }
                output.append(UInt8(truncatingIfNeeded: symbol))
                continue
            }
            if symbol == 256 { return }
            let lengthCode = symbol - 257
            guard lengthCode < 29 else { throw .corrupt("the reserved length code \(symbol)") }
            let length = DeflateTables.lengthBase[lengthCode] + (try take(DeflateTables.lengthExtra[lengthCode]))
            let distanceCode = try decode(distances)
            guard distanceCode < 30 else { throw .corrupt("the reserved distance code \(distanceCode)") }
            let distance = DeflateTables.distanceBase[distanceCode] + (try take(DeflateTables.distanceExtra[distanceCode]))
            guard distance <= output.count else { throw .corrupt("a distance of \(distance) reaches before the window's start") }
            guard output.count - start + length <= limit else { throw .tooLarge }
            copy(length: length, distance: distance)
        }
    }

    /// Appends `length` bytes from `distance` back (they may overlap the bytes being written:
    /// a distance of 1 repeats the last byte).
    mutating func copy(length: Int, distance: Int) {
        let from = output.count - distance
        let to = output.count
        if output.capacity < to + length { output.reserveCapacity(max(to + length, output.capacity * 2)) }
        output.append(contentsOf: repeatElement(0, count: length))
        output.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            if distance >= length {
                (base + to).update(from: base + from, count: length)
            } else {
                for index in 0..<length { base[to + index] = base[from + index] }
            }
        }
    }

    /// The code-length code, then the literal/length and distance codes of a dynamic block
    /// (RFC 1951 §3.2.7).
    mutating func dynamicTables() throws(Inflater.Failure) -> (Huffman, Huffman) {
        let literalCount = try take(5) + 257
        let distanceCount = try take(5) + 1
        let codeLengthCount = try take(4) + 4
        guard literalCount <= 286, distanceCount <= 30 else { throw .corrupt("too many length or distance codes") }
        var codeLengths = [UInt8](repeating: 0, count: 19)
        for index in 0..<codeLengthCount {
            codeLengths[Huffman.codeLengthOrder[index]] = UInt8(try take(3))
        }
        let codeLengthCode = try Huffman(codeLengths, allowsLoneCode: false, what: "code-length")
        var lengths = [UInt8]()
        lengths.reserveCapacity(literalCount + distanceCount)
        while lengths.count < literalCount + distanceCount {
            let symbol = try decode(codeLengthCode)
            let repeated: UInt8, times: Int
            switch symbol {
            case 0...15:
                lengths.append(UInt8(symbol))
                continue
            case 16:
                guard let last = lengths.last else { throw .corrupt("a repeat of the previous length before any length") }
                (repeated, times) = (last, 3 + (try take(2)))
            case 17: (repeated, times) = (0, 3 + (try take(3)))
            default: (repeated, times) = (0, 11 + (try take(7)))
            }
            guard lengths.count + times <= literalCount + distanceCount else { throw .corrupt("a repeated length past the last code") }
            lengths.append(contentsOf: repeatElement(repeated, count: times))
        }
        guard lengths[256] != 0 else { throw .corrupt("a block without an end-of-block code") }
        let literal = try Huffman(Array(lengths[..<literalCount]), allowsLoneCode: true, what: "literal/length")
        let distance = try Huffman(Array(lengths[literalCount...]), allowsLoneCode: true, what: "distance")
        return (literal, distance)
    }
}

/// A canonical Huffman code (RFC 1951 §3.2.2): how many codes of each length, the symbols in code
/// order, and a table that decodes codes of up to ``fastBits`` bits in one look.
private struct Huffman {
    static let maximumBits = 15
    static let fastBits = 9
    static let fastSize = 1 << fastBits

    var counts = [UInt16](repeating: 0, count: maximumBits + 1)
    /// The longest code's length: a pattern not matched by then is no code.
    var longest = 0
    var symbols: [UInt16]
    /// Indexed by the next ``fastBits`` bits of input: the code's length << 9 | its symbol, or 0.
    var fast = [UInt16](repeating: 0, count: fastSize)

    /// The code with these lengths (0: the symbol is unused).
    /// - Parameter allowsLoneCode: Whether a set that is incomplete is allowed when it is a single
    ///   one-bit code (zlib allows it for literal/length and distance codes; an empty set too).
    init(_ lengths: [UInt8], allowsLoneCode: Bool, what: String) throws(Inflater.Failure) {
        for length in lengths { counts[Int(length)] += 1 }
        counts[0] = 0
        var left = 1
        for length in 1...Self.maximumBits {
            left = (left << 1) - Int(counts[length])
            guard left >= 0 else { throw .corrupt("an over-subscribed \(what) code") }
            if counts[length] != 0 { longest = length }
        }
        if left > 0, longest != 0 || !allowsLoneCode {
            guard allowsLoneCode, longest == 1 else { throw .corrupt("an incomplete \(what) code") }
        }
        var offsets = [Int](repeating: 0, count: Self.maximumBits + 2)
        for length in 1...Self.maximumBits { offsets[length + 1] = offsets[length] + Int(counts[length]) }
        symbols = [UInt16](repeating: 0, count: offsets[Self.maximumBits + 1])
        var next = offsets
        for (symbol, length) in lengths.enumerated() where length != 0 {
            symbols[next[Int(length)]] = UInt16(symbol)
            next[Int(length)] += 1
        }
        // Codes in canonical order; each written into the table bit-reversed (DEFLATE sends a
        // code's bits from its most significant), at every index that ends with it.
        var code = 0
        var index = 0
        for length in 1...Self.maximumBits {
            for _ in 0..<Int(counts[length]) {
                if length <= Self.fastBits {
                    let reversed = Int(DeflateTables.reversed(code, length))
                    let entry = UInt16(length << 9) | symbols[index]
                    for slot in stride(from: reversed, to: Self.fastSize, by: 1 << length) { fast[slot] = entry }
                }
                code += 1
                index += 1
            }
            code <<= 1
        }
    }

    /// The fixed codes of RFC 1951 §3.2.6.
    static let fixedLengths: Huffman = {
        let lengths = [UInt8](repeating: 8, count: 144) + [UInt8](repeating: 9, count: 112)
            + [UInt8](repeating: 7, count: 24) + [UInt8](repeating: 8, count: 8)
        return (try? Huffman(lengths, allowsLoneCode: false, what: "fixed")) ?? Huffman.empty
    }()
    static let fixedDistances: Huffman = {
        (try? Huffman([UInt8](repeating: 5, count: 32), allowsLoneCode: false, what: "fixed")) ?? Huffman.empty
    }()
    /// A code with no symbols (never used: the fixed codes are complete).
    static var empty: Huffman { Huffman(symbols: []) }

    private init(symbols: [UInt16]) { self.symbols = symbols }

    static let codeLengthOrder = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]
}
