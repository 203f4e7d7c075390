#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Raw DEFLATE encoding (RFC 1951) of one message for permessage-deflate (RFC 7692 §7.2.1), in
/// Swift so the library needs no zlib: LZ77 matches found through hash chains, written in blocks
/// of the smallest kind for them (``DeflateBlocks``: Huffman codes fitted to the block, the fixed
/// codes, or stored), ended by a sync flush whose `00 00 FF FF` is left off (the receiver puts it
/// back).
///
/// A message is compressed on its own, or with the messages compressed before it as its history
/// when the context is taken over (RFC 7692 §7.2.3.2: a match may reach into them; the server's
/// inflater keeps them as its window), and no match reaches further back than the window the
/// server allowed (`client_max_window_bits`).
package enum Deflater {
    /// The longest hash chain followed for a match: more finds longer matches, at more CPU.
    static let chainLimit = 24

    /// A match this long ends the search: a longer one would save little more.
    static let niceLength = 128

    /// The farthest a position may be from a table's origin before the tables slide: a match
    /// that starts below it inserts positions at most 257 further, and every one must still fit
    /// a table's 16-bit entry (its distance from the origin, plus one).
    static let slideAt = Int(UInt16.max) - 258 - 2

    /// `input` compressed on its own, with back-references at most `1 << windowBits` bytes long
    /// (`windowBits` between 8 and 15).
    package static func compress(_ input: [UInt8], windowBits: Int = 15) -> [UInt8] {
        input.withUnsafeBufferPointer { compress($0, windowBits: windowBits) }
    }

    /// The bytes of `input` compressed on its own, read where they are (no copy first).
    package static func compress(_ input: Data, windowBits: Int = 15) -> [UInt8] {
        input.withUnsafeBytes { compress($0.assumingMemoryBound(to: UInt8.self), windowBits: windowBits) }
    }

    private static func compress(_ input: UnsafeBufferPointer<UInt8>, windowBits: Int) -> [UInt8] {
        var context = Context(windowBits: windowBits, expecting: input.count)
        var blocks = DeflateBlocks(start: 0, count: input.count)
        var origin = 0
        _ = context.head.withUnsafeMutableBufferPointer { head in
            context.previous.withUnsafeMutableBufferPointer { previous in
                encode(
                    input, from: 0, inserted: 0, origin: &origin, head: head, previous: previous, hashBits: context.hashBits,
                    window: context.window, into: &blocks)
            }
        }
        return blocks.finish(at: input.count, input: input)
    }

    /// What a deflater keeps between the messages it compresses when the context is taken over
    /// (RFC 7692 §7.2.3.2): the last window of what it compressed and the hash chains over it,
    /// so that a message may refer back into the ones before it without hashing them again.
    ///
    /// Positions are offsets into `data`. The chains hold each as its distance from `origin`,
    /// plus one, in 16 bits (0: none), as zlib does: tables half the size of 32-bit positions,
    /// which matters when many sockets each keep theirs and each message finds them out of the
    /// cache. When `data` reaches two windows, the oldest whole windows are dropped and every
    /// position moves down by as much (a multiple of the window, so the ring of chains keeps its
    /// slots); within a message longer than the tables reach, the origin moves up instead.
    package struct Context: Sendable {
        /// The window: back-references reach at most this far.
        let window: Int
        /// What was compressed, the last one to two windows of it.
        var data: [UInt8] = []
        /// Positions up to here are in the chains (the last two of a message wait for the bytes
        /// after them).
        var inserted = 0
        /// The position the chains' entries count from.
        var origin = 0
        let hashBits: Int
        /// The newest position of each hash.
        var head: [UInt16]
        /// The position before each one with the same hash, in a ring of the window's size.
        var previous: [UInt16]

        /// A context for messages compressed with back-references within `1 << windowBits`
        /// (8…15); `expecting` sizes the tables for one message of that length, when only one
        /// is compressed with it.
        package init(windowBits: Int, expecting: Int? = nil) {
            window = 1 << min(15, max(8, windowBits))
            if let expecting {
                // One message: tables no larger than it needs (no two positions share a slot).
                hashBits = min(15, max(8, Int.bitWidth - expecting.leadingZeroBitCount))
                previous = [UInt16](repeating: 0, count: expecting <= 8 ? 8 : min(window, 1 << (Int.bitWidth - (expecting - 1).leadingZeroBitCount)))
            } else {
                hashBits = 15
                previous = [UInt16](repeating: 0, count: window)
            }
            head = [UInt16](repeating: 0, count: 1 << hashBits)
        }

        /// Forgets everything compressed so far: after a message that was not sent compressed
        /// (the server's window never held it), nothing may refer back past it.
        package mutating func reset() {
            data.removeAll(keepingCapacity: true)
            inserted = 0
            origin = 0
            head.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
            previous.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
        }

        /// Drops the oldest whole windows once two are held, moving every position down.
        mutating func slide() {
            guard data.count >= 2 * window else { return }
            let shift = (data.count - window) / window * window
            data.removeFirst(shift)
            inserted -= shift
            if shift <= origin {
                origin -= shift
            } else {
                // Entries counted from a position now gone: down by the rest.
                head.withUnsafeMutableBufferPointer { Deflater.move($0, down: shift - origin) }
                previous.withUnsafeMutableBufferPointer { Deflater.move($0, down: shift - origin) }
                origin = 0
            }
        }
    }

    /// Every entry of `table` moved down by `shift`; one that falls to 0 or below is 0 (none).
    /// Branch-free through the buffer (a saturating subtraction), so the compiler can vectorize it.
    static func move(_ table: UnsafeMutableBufferPointer<UInt16>, down shift: Int) {
        guard let base = table.baseAddress else { return }
        let shift = UInt16(clamping: shift)
        for index in 0..<table.count {
            let entry = base[index]
            base[index] = entry &- min(entry, shift)
        }
    }

    /// `input` compressed with `context`: back-references reach into what the context compressed
    /// before (within its window), and `input` joins it.
    package static func compress(_ input: [UInt8], context: inout Context) -> [UInt8] {
        let first = context.data.count
        // Nothing kept (after a reset): the input's own storage, not a copy.
        if first == 0 { context.data = input } else { context.data += input }
        return compressAppended(from: first, count: input.count, context: &context)
    }

    /// The bytes of `input` compressed with `context`, copied once: into the context's history.
    package static func compress(_ input: Data, context: inout Context) -> [UInt8] {
        let first = context.data.count
        context.data.append(contentsOf: input)
        return compressAppended(from: first, count: input.count, context: &context)
    }

    /// The last `count` bytes of the context's history, from `first`, compressed.
    private static func compressAppended(from first: Int, count: Int, context: inout Context) -> [UInt8] {
        var blocks = DeflateBlocks(start: first, count: count)
        let (inserted, hashBits, window) = (context.inserted, context.hashBits, context.window)
        var origin = context.origin
        let output: [UInt8]
        (context.inserted, output) = context.data.withUnsafeBufferPointer { data in
            let reach = context.head.withUnsafeMutableBufferPointer { head in
                context.previous.withUnsafeMutableBufferPointer { previous in
                    encode(
                        data, from: first, inserted: inserted, origin: &origin, head: head, previous: previous, hashBits: hashBits,
                        window: window, into: &blocks)
                }
            }
            return (reach, blocks.finish(at: data.count, input: data))
        }
        context.origin = origin
        context.slide()
        return output
    }

    /// Writes `data[first...]` as literals and matches (into `blocks`, a block written each time
    /// one fills up), finding matches anywhere in `data` within
    /// `window` behind each position through the hash chains (`head`, and `previous`, a ring,
    /// whose entries count from `origin`); positions from `inserted` on go into the chains
    /// first. When a position gets ``slideAt`` past the origin, the origin moves up (the
    /// entries down) to a window behind it. Returns how far the chains reach: every position
    /// with three bytes after it.
    @inline(__always)
    private static func encode(
        _ data: UnsafeBufferPointer<UInt8>, from first: Int, inserted: Int, origin: inout Int, head: UnsafeMutableBufferPointer<UInt16>,
        previous: UnsafeMutableBufferPointer<UInt16>, hashBits: Int, window: Int, into blocks: inout DeflateBlocks
    ) -> Int {
        let count = data.count
        guard let base = data.baseAddress else { return 0 }
        let ring = previous.count
        let hashShift = UInt32(32 - hashBits)
        // Every index below is in bounds by construction (a hash reads three bytes where at least
        // three are left, a match compares no further than `limit` past either position, and a
        // candidate is always behind `position` and at or after `origin`), so the loop reads
        // through the buffers' pointers, without a bounds check a byte.
        let raw = UnsafeRawPointer(base)
        var from = origin
        /// The origin moved up so that `position` is a window past it (or as far as the tables
        /// reach); entries behind the new origin are dropped.
        func slide(to position: Int) {
            let shift = position - from - window
            guard shift > 0 else { return }
            move(head, down: shift)
            move(previous, down: shift)
            from += shift
        }
        func hash(_ at: Int) -> Int {
            let word = UInt32(base[at]) | UInt32(base[at + 1]) << 8 | UInt32(base[at + 2]) << 16
            return Int((word &* 0x9E37_79B1) >> hashShift)
        }
        func insert(_ at: Int) {
            let slot = hash(at)
            previous[at & (ring - 1)] = head[slot]
            head[slot] = UInt16(truncatingIfNeeded: at - from + 1)
        }
        /// How many bytes at `candidate` and `position` agree, at most `limit`: eight at a time,
        /// then one at a time.
        func agreeing(_ candidate: Int, _ position: Int, _ limit: Int) -> Int {
            var length = 0
            while length + 8 <= limit {
                let difference =
                    raw.loadUnaligned(fromByteOffset: candidate + length, as: UInt64.self)
                    ^ raw.loadUnaligned(fromByteOffset: position + length, as: UInt64.self)
                if difference != 0 { return length + UInt64(littleEndian: difference).trailingZeroBitCount / 8 }
                length += 8
            }
            while length < limit, base[candidate + length] == base[position + length] { length += 1 }
            return length
        }
        // The last positions of the message before, now that the bytes after them are here.
        var waiting = inserted
        if first - from >= slideAt { slide(to: first) }
        while waiting < first, count - waiting >= 3 {
            insert(waiting)
            waiting += 1
        }
        var position = first
        while position < count {
            if position - from >= slideAt { slide(to: position) }
            var bestLength = 0
            var bestDistance = 0
            if count - position >= 3 {
                let limit = min(258, count - position)
                var entry = Int(head[hash(position)])
                var chain = chainLimit
                while entry != 0, chain > 0 {
                    let candidate = from + entry - 1
                    guard position - candidate <= window else { break }
                    if base[candidate + bestLength] == base[position + bestLength] {
                        let length = agreeing(candidate, position, limit)
                        if length > bestLength {
                            bestLength = length
                            bestDistance = position - candidate
                            if length >= min(limit, niceLength) { break }
                        }
                    }
                    let next = Int(previous[candidate & (ring - 1)])
                    // A slot of the ring overwritten by a newer position ends the chain.
                    guard next < entry else { break }
                    entry = next
                    chain -= 1
                }
                insert(position)
            }
            if bestLength >= 3 {
                blocks.match(length: bestLength, distance: bestDistance)
                let end = position + bestLength
                position += 1
                while position < end {
                    if count - position >= 3 { insert(position) }
                    position += 1
                }
            } else {
                blocks.literal(base[position])
                position += 1
            }
            if blocks.isFull { blocks.flush(through: position, input: data) }
        }
        origin = from
        // Every position with three bytes after it is in the chains now.
        return max(inserted, count - 2)
    }
}

extension Deflater {
    /// `input` in stored blocks of at most 65,535 bytes (RFC 1951 §3.2.4), then a sync flush's
    /// header.
    static func stored(_ input: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(input.count + input.count / 65_535 * 5 + 6)
        var start = 0
        repeat {
            let length = min(65_535, input.count - start)
            output += [0x00, UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8((~length >> 8) & 0xFF)]
            output += input[start..<(start + length)]
            start += length
        } while start < input.count
        output.append(0x00)
        return output
    }
}
