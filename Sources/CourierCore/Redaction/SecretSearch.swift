/// Finds every occurrence of many byte strings in one pass over a text (an Aho–Corasick
/// automaton), for the echoes of a request's secret values.
///
/// A request with many secrets has hundreds of spellings to look for (each value in NFC and
/// NFD, each as JSON encoders write it); searching for each one on its own costs the text's
/// length times their number, and a hostile body (a drip of near-misses) makes that the worst
/// case. Here the text is read once, whatever the number of spellings: a step per byte, plus the
/// occurrences found.
struct SecretSearch: Sendable {
    /// The node reached from the root by each byte (0: the root itself), so that the step most
    /// bytes take is one array read.
    private let rootNext: [Int32]
    /// The other nodes' edges: each node's first child and each node's next sibling, with the
    /// byte that leads to each node. Most nodes have one child.
    private let firstChild: [Int32]
    private let nextSibling: [Int32]
    private let byte: [UInt8]
    /// Where the search goes on when a node has no edge for the next byte: the node of the
    /// longest proper suffix that is also in the trie.
    private let failure: [Int32]
    /// The number of bytes from the root to each node.
    private let depth: [Int32]
    /// The length of the longest pattern that ends at each node (the node's own, or one ending in
    /// a suffix of it); 0 for none.
    private let longestMatch: [Int32]

    /// Whether there is nothing to look for.
    var isEmpty: Bool { byte.count <= 1 }

    /// A search for `patterns` (empty ones and repeats are ignored).
    init(_ patterns: [[UInt8]]) {
        // Nothing to look for (most requests carry no secret): nothing to build.
        guard patterns.contains(where: { !$0.isEmpty }) else {
            (rootNext, firstChild, nextSibling, byte, failure, depth, longestMatch) = ([], [], [], [], [], [], [])
            return
        }
        // The trie. Node 0 is the root; -1 is no node.
        var rootNext = [Int32](repeating: 0, count: 256)
        var firstChild: [Int32] = [-1]
        var nextSibling: [Int32] = [-1]
        var byte: [UInt8] = [0]
        var depth: [Int32] = [0]
        var longestMatch: [Int32] = [0]
        for pattern in patterns where !pattern.isEmpty {
            var node: Int32 = 0
            for value in pattern {
                var next = node == 0 ? rootNext[Int(value)] : Self.child(of: node, value, firstChild, nextSibling, byte)
                if next <= 0 {
                    next = Int32(byte.count)
                    firstChild.append(-1)
                    nextSibling.append(firstChild[Int(node)])
                    byte.append(value)
                    depth.append(depth[Int(node)] + 1)
                    longestMatch.append(0)
                    firstChild[Int(node)] = next
                    if node == 0 { rootNext[Int(value)] = next }
                }
                node = next
            }
            longestMatch[Int(node)] = Int32(pattern.count)
        }

        // Failure links and longest matches, breadth first: a node's suffixes are shallower.
        var failure = [Int32](repeating: 0, count: byte.count)
        var queue: [Int32] = []
        queue.reserveCapacity(byte.count)
        var child = firstChild[0]
        while child >= 0 {
            queue.append(child)
            child = nextSibling[Int(child)]
        }
        var head = 0
        while head < queue.count {
            let node = queue[head]
            head += 1
            var child = firstChild[Int(node)]
            while child >= 0 {
                queue.append(child)
                let value = byte[Int(child)]
                var fallback = failure[Int(node)]
                while true {
                    let target = fallback == 0 ? rootNext[Int(value)] : Self.child(of: fallback, value, firstChild, nextSibling, byte)
                    if target > 0 {
                        failure[Int(child)] = target
                        break
                    }
                    if fallback == 0 { break }
                    fallback = failure[Int(fallback)]
                }
                longestMatch[Int(child)] = max(longestMatch[Int(child)], longestMatch[Int(failure[Int(child)])])
                child = nextSibling[Int(child)]
            }
        }
        self.rootNext = rootNext
        self.firstChild = firstChild
        self.nextSibling = nextSibling
        self.byte = byte
        self.failure = failure
        self.depth = depth
        self.longestMatch = longestMatch
    }

    /// The node after reading `byte` in `node`.
    private func step(_ node: Int32, _ byte: UInt8) -> Int32 {
        var node = node
        while node != 0 {
            if let next = edge(from: node, byte) { return next }
            node = failure[Int(node)]
        }
        return rootNext[Int(byte)]
    }

    /// The edge from `node` (not the root) for `value`, if any.
    private func edge(from node: Int32, _ value: UInt8) -> Int32? {
        let next = Self.child(of: node, value, firstChild, nextSibling, byte)
        return next > 0 ? next : nil
    }

    /// `node`'s child for `value` in the trie these arrays hold, or -1.
    private static func child(of node: Int32, _ value: UInt8, _ firstChild: [Int32], _ nextSibling: [Int32], _ byte: [UInt8]) -> Int32 {
        var child = firstChild[Int(node)]
        while child >= 0 {
            if byte[Int(child)] == value { return child }
            child = nextSibling[Int(child)]
        }
        return -1
    }

    /// The bytes of `text` that belong to an occurrence of any pattern, as ranges in order.
    /// Overlapping occurrences (of one pattern or of several) are one range; ranges that only
    /// touch stay apart.
    /// - Parameters:
    ///   - text: The text, as bytes.
    ///   - minimumCutLength: When given, the end of `text` that is the first bytes of a pattern
    ///     (at least this many, the longest such) is a range too: a text cut there may be cutting
    ///     a secret.
    ///   - opaque: A placeholder: an occurrence wholly inside one is not reported. A secret
    ///     that is part of the placeholder (`<reda`) would otherwise be found in every
    ///     placeholder put in its place, and hiding it would never end; where it shows, it shows
    ///     only what every placeholder shows.
    func occurrences(in text: [UInt8], minimumCutLength: Int? = nil, opaque: [UInt8] = []) -> [Range<Int>] {
        guard !isEmpty else { return [] }
        let opaqueStarts = Self.starts(of: opaque, in: text)
        var nextOpaque = 0
        var ranges: [Range<Int>] = []
        func add(_ range: Range<Int>) {
            // The first placeholder that ends at or after this range is the only one that can
            // hold it: placeholders do not overlap, and ranges come in order of their ends.
            while nextOpaque < opaqueStarts.count, opaqueStarts[nextOpaque] + opaque.count < range.upperBound { nextOpaque += 1 }
            if nextOpaque < opaqueStarts.count, opaqueStarts[nextOpaque] <= range.lowerBound { return }
            var lower = range.lowerBound
            while let last = ranges.last, lower < last.upperBound {
                lower = min(lower, last.lowerBound)
                ranges.removeLast()
            }
            ranges.append(lower..<range.upperBound)
        }
        var node: Int32 = 0
        text.withUnsafeBufferPointer { bytes in
            for index in bytes.indices {
                node = step(node, bytes[index])
                let length = Int(longestMatch[Int(node)])
                if length > 0 { add((index + 1 - length)..<(index + 1)) }
            }
        }
        if let minimumCutLength, Int(depth[Int(node)]) >= minimumCutLength {
            add((text.count - Int(depth[Int(node)]))..<text.count)
        }
        return ranges
    }

    /// Where `needle` starts in `text`, left to right, not overlapping; none for an empty needle.
    private static func starts(of needle: [UInt8], in text: [UInt8]) -> [Int] {
        guard let head = needle.first, needle.count <= text.count else { return [] }
        var starts: [Int] = []
        var index = 0
        while index <= text.count - needle.count {
            if text[index] == head, text[index..<index + needle.count].elementsEqual(needle) {
                starts.append(index)
                index += needle.count
            } else {
                index += 1
            }
        }
        return starts
    }

    /// Whether `text` holds an occurrence of any pattern.
    func occurs(in text: [UInt8]) -> Bool {
        guard !isEmpty else { return false }
        var node: Int32 = 0
        for byte in text {
            node = step(node, byte)
            if longestMatch[Int(node)] > 0 { return true }
        }
        return false
    }
}
