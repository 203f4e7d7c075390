/// The deflater's output, block by block (RFC 1951 §3.2.3): the literals and matches it finds are
/// collected with their counts, and every ``blockSymbols`` of them (and at the message's end) go
/// out as the smallest of the three kinds of block for them: Huffman codes made for this block's
/// counts (§3.2.7, whose header describes the codes), the fixed codes (§3.2.6, no header: best
/// for a few bytes), or the bytes stored as they are (§3.2.4: what did not compress).
struct DeflateBlocks {
    /// Symbols collected before a block goes out (zlib's default too): codes fitted to a part of
    /// a long message, and a bounded buffer.
    static let blockSymbols = 16_384
    /// The fewest bits a block takes with the fixed codes for codes of its own to be tried.
    static let leastForOwnCodes = 1_024

    /// A literal byte (below 256), or a match: `1 << 31 | lengthCode << 23 | (distance - 1) << 8 |
    /// (length - 3)`.
    private var symbols: [UInt32] = []
    /// How often each literal/length symbol (0…285) occurs in the block, the end of block included.
    private var literalCounts = [UInt32](repeating: 0, count: 286)
    /// How often each distance code (0…29) occurs in the block.
    private var distanceCounts = [UInt32](repeating: 0, count: 30)
    /// The block's size in bits with the fixed codes, counted as symbols come.
    private var fixedBits = 3
    /// The extra bits of the block's lengths and distances (the same whatever the codes).
    private var extraBits = 0
    /// How many matches the block has.
    private var matches = 0
    /// Where the block's bytes start in the input (for a stored block).
    private var blockStart: Int
    /// The tables each match reads, held here: no lazy global's check a match.
    private let lengthCodes = Codes.lengthCode
    private let distanceCodes = Codes.distanceCodes
    private let lengthExtra = DeflateTables.lengthExtra
    private let distanceExtra = DeflateTables.distanceExtra
    private(set) var writer: BitWriter

    /// Blocks for the bytes of a message from `start` on, about `count` of them.
    init(start: Int, count: Int) {
        blockStart = start
        writer = BitWriter(capacity: count / 2 + 16)
        symbols.reserveCapacity(min(Self.blockSymbols, count + 1))
    }

    /// A literal byte.
    @inline(__always)
    mutating func literal(_ byte: UInt8) {
        symbols.append(UInt32(byte))
        literalCounts[Int(byte)] &+= 1
        fixedBits &+= byte < 144 ? 8 : 9
    }

    /// A match of `length` (3…258) bytes, `distance` (1…32,768) back.
    @inline(__always)
    mutating func match(length: Int, distance: Int) {
        let lengthCode = Int(lengthCodes[length])
        let distanceCode = Codes.distanceCode(distance, in: distanceCodes)
        symbols.append(1 << 31 | UInt32(lengthCode) << 23 | UInt32(distance - 1) << 8 | UInt32(length - 3))
        literalCounts[257 + lengthCode] &+= 1
        distanceCounts[distanceCode] &+= 1
        // Length symbols 257…279 take 7 bits in the fixed code, 280…285 take 8; distances 5.
        fixedBits &+= (lengthCode < 23 ? 7 : 8) + 5
        extraBits &+= lengthExtra[lengthCode] + distanceExtra[distanceCode]
        matches &+= 1
    }

    /// Whether a block is full: the caller writes it (``flush(through:input:)``) before adding more.
    var isFull: Bool { symbols.count >= Self.blockSymbols }

    /// Writes the symbols collected as one block (not the last, RFC 7692 ends a message with a
    /// sync flush) ending before `end` in `input`, the whole input the positions count in.
    mutating func flush(through end: Int, input: UnsafeBufferPointer<UInt8>) {
        literalCounts[256] = 1
        // Each kind's size in bits; the extra bits of lengths and distances are the same for both
        // coded kinds, and counted for the comparison with a stored block.
        let fixedBits = self.fixedBits + 7  // the end of block
        let (extra, distances) = (extraBits, matches)
        let length = end - blockStart
        let storedBits = ((length + 65_534) / 65_535 * 5 + length) * 8 + 7
        let best = min(fixedBits + extra, storedBits)
        // A block whose fixed coding is under 128 bytes keeps it (or is stored): a header of
        // codes describes at least 258 code lengths, which in such a block costs about what the
        // codes would save, and building the codes would cost more than the block's matching.
        if best < Self.leastForOwnCodes {
            writePlain(fixedBits: fixedBits + extra, storedBits: storedBits, through: end, input: input)
            return
        }
        // Codes of the block's own: the literal/length code first, and what the block costs at
        // least with it (a bit a distance; a header with the lengths of this code run-length
        // coded, a bit each and their extra bits, and the lengths of the code-length code up to
        // the last one these use): a small block, whose header would cost more than the codes
        // save, stops here.
        let literalLengths = HuffmanLengths.lengths(literalCounts, limit: 15)
        var literalBits = 0
        for symbol in 0..<286 where literalCounts[symbol] > 0 { literalBits += Int(literalCounts[symbol]) * Int(literalLengths[symbol]) }
        var runBits = 0
        var lastInOrder = 3
        DynamicHeader.runs(literalLengths[..<DynamicHeader.used(literalLengths, atLeast: 257)]) { run in
            runBits += 1 + DynamicHeader.extraBits(run & 0xFF)
            lastInOrder = max(lastInOrder, DynamicHeader.position[Int(run & 0xFF)])
        }
        let leastHeader = 3 + 5 + 5 + 4 + 3 * (lastInOrder + 1) + runBits
        if leastHeader + literalBits + distances + extra < best {
            let distanceLengths = HuffmanLengths.lengths(distanceCounts, limit: 15)
            let header = DynamicHeader(literalLengths: literalLengths, distanceLengths: distanceLengths)
            var dynamicBits = header.bits + literalBits
            for code in 0..<30 where distanceCounts[code] > 0 { dynamicBits += Int(distanceCounts[code]) * Int(distanceLengths[code]) }
            if dynamicBits + extra < best {
                header.write(into: &writer)
                writeSymbols(
                    literal: Codes(codes: HuffmanLengths.codes(literalLengths), lengths: literalLengths),
                    distance: Codes(codes: HuffmanLengths.codes(distanceLengths), lengths: distanceLengths))
                reset(at: end)
                return
            }
        }
        writePlain(fixedBits: fixedBits + extra, storedBits: storedBits, through: end, input: input)
    }

    /// Writes the block with the fixed codes, or stored when that is shorter.
    private mutating func writePlain(fixedBits: Int, storedBits: Int, through end: Int, input: UnsafeBufferPointer<UInt8>) {
        if storedBits < fixedBits {
            writer.writeStored(UnsafeBufferPointer(rebasing: input[blockStart..<end]))
        } else {
            writer.write(0b010, bits: 3)  // not the last block; fixed codes
            writeSymbols(literal: Codes.fixed, distance: Codes.fixedDistances)
        }
        reset(at: end)
    }

    /// Empties the block, the next one starting at `end`.
    private mutating func reset(at end: Int) {
        fixedBits = 3
        extraBits = 0
        matches = 0
        symbols.removeAll(keepingCapacity: true)
        literalCounts.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
        distanceCounts.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
        blockStart = end
    }

    /// The block's symbols and its end, in `literal` and `distance` codes.
    private mutating func writeSymbols(literal: Codes, distance: Codes) {
        let (lengthBase, distanceBase, distanceCodes) = (DeflateTables.lengthBase, DeflateTables.distanceBase, distanceCodes)
        for symbol in symbols {
            if symbol < 256 {
                writer.write(literal, Int(symbol))
                continue
            }
            let length = Int(symbol & 0xFF) + 3
            let distanceValue = Int(symbol >> 8 & 0x7FFF) + 1
            let lengthCode = Int(symbol >> 23 & 0x1F)
            writer.write(literal, 257 + lengthCode)
            if lengthExtra[lengthCode] > 0 { writer.write(length - lengthBase[lengthCode], bits: lengthExtra[lengthCode]) }
            let distanceCode = Codes.distanceCode(distanceValue, in: distanceCodes)
            writer.write(distance, distanceCode)
            if distanceExtra[distanceCode] > 0 { writer.write(distanceValue - distanceBase[distanceCode], bits: distanceExtra[distanceCode]) }
        }
        writer.write(literal, 256)
    }

    /// The message's end: the last block, then the sync flush, an empty stored block whose header
    /// and padding stay and whose `00 00 FF FF` goes (RFC 7692 §7.2.1).
    mutating func finish(at end: Int, input: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        if !symbols.isEmpty || end > blockStart { flush(through: end, input: input) }
        writer.write(0, bits: 3)
        writer.alignToByte()
        return writer.take()
    }
}

/// A dynamic block's header (RFC 1951 §3.2.7): the code lengths of both codes, run-length coded
/// (16: the previous length 3–6 times, 17: 3–10 zeros, 18: 11–138 zeros), in a code of their own.
private struct DynamicHeader {
    /// The order the code-length code's lengths are written in.
    static let order = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]
    /// Where each code-length symbol (0…18) comes in ``order``.
    static let position: [Int] = (0..<19).map { symbol in order.firstIndex(of: symbol) ?? 18 }

    let literalCount: Int
    let distanceCount: Int
    /// The run-length symbols (0…18), each with its extra bits' value above them (`extra << 8 |
    /// symbol`).
    let runs: [UInt16]
    let codeLengths: [UInt8]
    let codeLengthCount: Int
    /// The header's size in bits, the block type's three included.
    private(set) var bits = 0

    init(literalLengths: [UInt8], distanceLengths: [UInt8]) {
        literalCount = Self.used(literalLengths, atLeast: 257)
        distanceCount = Self.used(distanceLengths, atLeast: 1)
        // One sequence: a run may go on from the literal lengths into the distance lengths.
        var runs: [UInt16] = []
        runs.reserveCapacity(literalCount + distanceCount)
        var counts = [UInt32](repeating: 0, count: 19)
        Self.runs(literalLengths[..<literalCount] + distanceLengths[..<distanceCount]) { runs.append($0) }
        self.runs = runs
        for run in runs { counts[Int(run & 0xFF)] += 1 }
        codeLengths = HuffmanLengths.lengths(counts, limit: 7)
        var codeLengthCount = 19
        while codeLengthCount > 4, codeLengths[Self.order[codeLengthCount - 1]] == 0 { codeLengthCount -= 1 }
        self.codeLengthCount = codeLengthCount
        bits = 3 + 5 + 5 + 4 + 3 * codeLengthCount
        for run in runs { bits += Int(codeLengths[Int(run & 0xFF)]) + Self.extraBits(run & 0xFF) }
    }

    /// How many of `lengths` are written: up to the last that is not 0, and at least `least`.
    static func used(_ lengths: [UInt8], atLeast least: Int) -> Int {
        var count = lengths.count
        while count > least, lengths[count - 1] == 0 { count -= 1 }
        return count
    }

    /// `lengths` run-length coded: each symbol (0…18) handed to `body` with its extra bits'
    /// value above it (`extra << 8 | symbol`).
    @inline(__always)
    static func runs<Lengths: RandomAccessCollection<UInt8>>(_ lengths: Lengths, _ body: (UInt16) -> Void) where Lengths.Index == Int {
        var index = lengths.startIndex
        while index < lengths.endIndex {
            let value = lengths[index]
            var run = 1
            while index + run < lengths.endIndex, lengths[index + run] == value { run += 1 }
            index += run
            if value == 0 {
                while run >= 11 {
                    let taken = min(run, 138)
                    body(18 | UInt16(taken - 11) << 8)
                    run -= taken
                }
                if run >= 3 {
                    body(17 | UInt16(run - 3) << 8)
                    run = 0
                }
            } else {
                body(UInt16(value))
                run -= 1
                while run >= 3 {
                    let taken = min(run, 6)
                    body(16 | UInt16(taken - 3) << 8)
                    run -= taken
                }
            }
            for _ in 0..<run { body(UInt16(value)) }
        }
    }

    static func extraBits(_ symbol: UInt16) -> Int {
        switch symbol {
        case 16: 2
        case 17: 3
        case 18: 7
        default: 0
        }
    }

    func write(into writer: inout BitWriter) {
        writer.write(0b100, bits: 3)  // not the last block; dynamic codes
        writer.write(literalCount - 257, bits: 5)
        writer.write(distanceCount - 1, bits: 5)
        writer.write(codeLengthCount - 4, bits: 4)
        for index in 0..<codeLengthCount { writer.write(Int(codeLengths[Self.order[index]]), bits: 3) }
        let code = Codes(codes: HuffmanLengths.codes(codeLengths), lengths: codeLengths)
        for run in runs {
            writer.write(code, Int(run & 0xFF))
            let extra = Self.extraBits(run & 0xFF)
            if extra > 0 { writer.write(Int(run >> 8), bits: extra) }
        }
    }
}

/// A Huffman code to write with: each symbol's code, bit-reversed, and its length.
struct Codes {
    let codes: [UInt16]
    let lengths: [UInt8]

    /// The fixed literal/length codes of RFC 1951 §3.2.6 (symbols 0…287).
    static let fixed: Codes = {
        let lengths: [UInt8] = (0..<288).map { $0 < 144 ? 8 : $0 < 256 ? 9 : $0 < 280 ? 7 : 8 }
        return Codes(codes: HuffmanLengths.codes(lengths), lengths: lengths)
    }()
    /// The fixed distance codes: 5 bits each.
    static let fixedDistances: Codes = {
        let lengths = [UInt8](repeating: 5, count: 30)
        return Codes(codes: HuffmanLengths.codes(lengths), lengths: lengths)
    }()

    /// The distance code (0…29) of each distance: of `d` at `d - 1` for 1…256, and at
    /// `256 + (d - 1) >> 7` above (the codes from 16 on each cover a multiple of 128).
    static let distanceCodes: [UInt8] = (0..<512).map { index in
        let distance = index < 256 ? index + 1 : ((index - 256) << 7) + 1
        var code = 0
        while code < 29, DeflateTables.distanceBase[code + 1] <= distance { code += 1 }
        return UInt8(code)
    }

    /// The distance code (0…29) of `distance`, from ``distanceCodes`` (held by the caller: a
    /// loop reads it without the lazy global's check).
    @inline(__always)
    static func distanceCode(_ distance: Int, in table: [UInt8]) -> Int {
        Int(distance <= 256 ? table[distance - 1] : table[256 + ((distance - 1) >> 7)])
    }

    /// For each match length 0…258: its length code (0…28); lengths under 3 are never written.
    static let lengthCode: [UInt8] = (0...258).map { length in
        var code = 0
        while code < 28, DeflateTables.lengthBase[code + 1] <= length { code += 1 }
        return UInt8(code)
    }
}

/// Bits into bytes, least significant first (RFC 1951 §3.1.1): gathered in a 64-bit word and
/// stored four bytes at a time into storage sized ahead (one uniqueness check a store, not a byte).
struct BitWriter {
    /// The bytes written, then room: only the first `used` count.
    private var storage: [UInt8]
    private var used = 0
    private var buffer: UInt64 = 0
    private var count = 0

    init(capacity: Int) { storage = [UInt8](repeating: 0, count: max(64, capacity)) }

    /// The bytes written (whole bytes only: align first).
    mutating func take() -> [UInt8] {
        storage.removeSubrange(used...)
        used = 0
        return storage
    }

    @inline(__always)
    mutating func write(_ value: Int, bits: Int) {
        buffer |= UInt64(truncatingIfNeeded: value) << UInt64(count)
        count += bits
        if count >= 32 { spill() }
    }

    /// The buffer's low four bytes stored (eight written, the upper four overwritten next).
    @inline(__always)
    private mutating func spill() {
        if used + 8 > storage.count { grow(by: 8) }
        let (word, at) = (buffer.littleEndian, used)
        storage.withUnsafeMutableBytes { $0.storeBytes(of: word, toByteOffset: at, as: UInt64.self) }
        used += 4
        buffer >>= 32
        count -= 32
    }

    private mutating func grow(by least: Int) {
        storage.append(contentsOf: repeatElement(0, count: max(least, storage.count)))
    }

    /// `symbol` in `code`.
    @inline(__always)
    mutating func write(_ code: Codes, _ symbol: Int) {
        write(Int(code.codes[symbol]), bits: Int(code.lengths[symbol]))
    }

    /// Pads to the next byte with zero bits and moves every whole byte out of the buffer.
    mutating func alignToByte() {
        count = (count + 7) & ~7
        if used + 8 > storage.count { grow(by: 8) }
        while count > 0 {
            storage[used] = UInt8(truncatingIfNeeded: buffer)
            used += 1
            buffer >>= 8
            count -= 8
        }
        buffer = 0
    }

    /// `data` in stored blocks of at most 65,535 bytes (RFC 1951 §3.2.4), none the last.
    mutating func writeStored(_ data: UnsafeBufferPointer<UInt8>) {
        var start = 0
        repeat {
            let length = min(65_535, data.count - start)
            write(0, bits: 3)
            alignToByte()
            if used + 4 + length > storage.count { grow(by: 4 + length) }
            let header = [UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8((~length >> 8) & 0xFF)]
            let at = used
            storage.withUnsafeMutableBufferPointer { output in
                for (index, byte) in header.enumerated() { output[at + index] = byte }
                guard length > 0, let source = data.baseAddress, let target = output.baseAddress else { return }
                (target + at + 4).update(from: source + start, count: length)
            }
            used += 4 + length
            start += length
        } while start < data.count
    }
}
