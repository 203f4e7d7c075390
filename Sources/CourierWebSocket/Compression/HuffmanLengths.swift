/// Huffman codes for the deflater's dynamic blocks (RFC 1951 §3.2.2, §3.2.7): code lengths from
/// symbol counts, no longer than DEFLATE allows, and the canonical codes those lengths stand for.
enum HuffmanLengths {
    /// The length of each symbol's code, built from `counts` (a symbol counted 0 times gets no
    /// code), none longer than `limit` bits.
    ///
    /// The code is always complete (its codes fill the whole code space, as every inflater
    /// accepts, zlib included, which refuses an incomplete code-length code): fewer than two
    /// symbols counted get the first unused symbols added with a count of one.
    ///
    /// An optimal Huffman code is built first (two queues over the counts sorted once); should a
    /// code come out longer than `limit` (only counts spread like the Fibonacci numbers over
    /// thousands of symbols do that), every count is halved, keeping each at least one, and the
    /// code is built again: the counts flatten, and a code over at most 286 equal counts is 9
    /// bits deep.
    static func lengths(_ counts: [UInt32], limit: Int) -> [UInt8] {
        var counts = counts
        var used = counts.reduce(0) { $0 + ($1 > 0 ? 1 : 0) }
        var fill = 0
        while used < 2, fill < counts.count {
            if counts[fill] == 0 {
                counts[fill] = 1
                used += 1
            }
            fill += 1
        }
        while true {
            let (lengths, longest) = optimal(counts)
            if longest <= limit { return lengths }
            counts = counts.map { $0 == 0 ? 0 : ($0 + 1) / 2 }
        }
    }

    /// An optimal (unlimited) Huffman code's lengths for `counts`, and its longest length. Its
    /// scratch space is on the stack: a block's three codes cost no allocation but their lengths.
    private static func optimal(_ counts: [UInt32]) -> ([UInt8], Int) {
        var lengths = [UInt8](repeating: 0, count: counts.count)
        let nodes = 2 * counts.count
        let longest = withUnsafeTemporaryAllocation(of: UInt64.self, capacity: 3 * nodes) { scratch -> Int in
            // Leaves in ascending count (ties in symbol order), sorted as plain integers (count,
            // then symbol); then internal nodes as they are made, which come out in ascending
            // weight too: the two lightest are always at one queue's front.
            var leafCount = 0
            for (symbol, count) in counts.enumerated() where count > 0 {
                scratch[leafCount] = UInt64(count) << 16 | UInt64(symbol)
                leafCount += 1
            }
            let keys = UnsafeMutableBufferPointer(rebasing: scratch[0..<leafCount])
            sortKeys(keys, spare: UnsafeMutableBufferPointer(rebasing: scratch[nodes..<(nodes + leafCount)]))
            guard leafCount > 1 else {
                if leafCount == 1 { lengths[Int(keys[0] & 0xFFFF)] = 1 }
                return leafCount
            }
            // Node i < leafCount is the i-th leaf; node leafCount + j the j-th internal node.
            // Weights after the keys, parents after the weights (as node numbers).
            let weight = UnsafeMutableBufferPointer(rebasing: scratch[nodes..<(2 * nodes)])
            let parent = UnsafeMutableBufferPointer(rebasing: scratch[(2 * nodes)..<(3 * nodes)])
            for index in 0..<leafCount { weight[index] = keys[index] >> 16 }
            var nextLeaf = 0
            var nextInternal = leafCount
            var made = leafCount
            func lightest() -> Int {
                if nextLeaf < leafCount, nextInternal == made || weight[nextLeaf] <= weight[nextInternal] {
                    defer { nextLeaf += 1 }
                    return nextLeaf
                }
                defer { nextInternal += 1 }
                return nextInternal
            }
            while made < 2 * leafCount - 1 {
                let first = lightest()
                let second = lightest()
                weight[made] = weight[first] + weight[second]
                parent[first] = UInt64(made)
                parent[second] = UInt64(made)
                made += 1
            }
            // Depths from the root (the last node made) down, into the weights, no longer needed:
            // a parent is always made after its children.
            var longest = 0
            weight[made - 1] = 0
            for node in stride(from: made - 2, through: 0, by: -1) {
                let depth = weight[Int(parent[node])] + 1
                weight[node] = depth
                if node < leafCount {
                    lengths[Int(keys[node] & 0xFFFF)] = UInt8(depth)
                    longest = max(longest, Int(depth))
                }
            }
            return longest
        }
        return (lengths, longest)
    }

    /// `keys` (`count << 16 | symbol`, made in symbol order) in ascending order: a few by
    /// insertion, more by two passes of a radix sort on the count's bytes (stable, so ties stay
    /// in symbol order), through `spare` (as long as `keys`); counts of 2^16 and more by the
    /// standard library's sort.
    private static func sortKeys(_ keys: UnsafeMutableBufferPointer<UInt64>, spare: UnsafeMutableBufferPointer<UInt64>) {
        if keys.count <= 24 {
            for index in keys.indices.dropFirst() {
                let key = keys[index]
                var slot = index
                while slot > 0, keys[slot - 1] > key {
                    keys[slot] = keys[slot - 1]
                    slot -= 1
                }
                keys[slot] = key
            }
            return
        }
        guard keys.allSatisfy({ $0 >> 32 == 0 }) else {
            var keys = keys
            keys.sort()
            return
        }
        withUnsafeTemporaryAllocation(of: Int.self, capacity: 256) { buckets in
            for (shift, from, to) in [(16, keys, spare), (24, spare, keys)] {
                buckets.initialize(repeating: 0)
                for key in from { buckets[Int(key >> UInt64(shift) & 0xFF)] += 1 }
                var start = 0
                for bucket in 0..<256 {
                    let count = buckets[bucket]
                    buckets[bucket] = start
                    start += count
                }
                for key in from {
                    let bucket = Int(key >> UInt64(shift) & 0xFF)
                    to[buckets[bucket]] = key
                    buckets[bucket] += 1
                }
            }
        }
    }

    /// The canonical codes for `lengths` (RFC 1951 §3.2.2), each bit-reversed for a stream written
    /// from its least significant bit; a symbol without a length gets 0.
    static func codes(_ lengths: [UInt8]) -> [UInt16] {
        var codes = [UInt16](repeating: 0, count: lengths.count)
        withUnsafeTemporaryAllocation(of: Int.self, capacity: 16) { next in
            next.initialize(repeating: 0)
            // How many codes of each length, then the first code of each length.
            for length in lengths where length > 0 { next[Int(length)] += 1 }
            var code = 0
            var previous = 0
            for bits in 1..<16 {
                code = (code + previous) << 1
                previous = next[bits]
                next[bits] = code
            }
            let table = DeflateTables.reversedBytes
            lengths.withUnsafeBufferPointer { lengths in
                codes.withUnsafeMutableBufferPointer { codes in
                    for symbol in lengths.indices where lengths[symbol] > 0 {
                        let length = Int(lengths[symbol])
                        codes[symbol] = DeflateTables.reversed(next[length], length, table: table)
                        next[length] += 1
                    }
                }
            }
        }
        return codes
    }
}
