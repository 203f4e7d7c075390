#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Splits bytes into lines as they arrive, whatever the chunking: a line ends at CR, LF or CRLF
/// (a CRLF split across two chunks is one ending), and the last line needs no ending.
///
/// Lines are bounded: one longer than ``maximumLength`` bytes is an error, never an unbounded
/// buffer. ``ByteStream/lines`` uses this; feed it yourself to split other sources.
///
/// ```swift
/// var splitter = LineSplitter()
/// try splitter.feed(Data("a\r".utf8)) { print($0) }    // a
/// try splitter.feed(Data("\nb".utf8)) { print($0) }    // (nothing: CRLF, and b is unfinished)
/// splitter.finish { print($0) }                         // b
/// ```
public struct LineSplitter: Sendable {
    /// The longest line accepted, in bytes (without its ending).
    public let maximumLength: Int
    /// How many lines have been emitted (the 1-based number of the last one).
    public private(set) var lineNumber = 0
    private var pending: [UInt8] = []
    private var afterCR = false
    /// How many bytes of a leading byte order mark have been seen; 3 or `nil` once decided.
    private var markMatched: Int?

    /// The longest line accepted by default: 1 MiB.
    public static let defaultMaximumLength = 1 << 20

    /// Creates a splitter.
    /// - Parameters:
    ///   - maximumLength: The longest line accepted, in bytes.
    ///   - dropsByteOrderMark: Whether a UTF-8 byte order mark at the very start is removed.
    public init(maximumLength: Int = LineSplitter.defaultMaximumLength, dropsByteOrderMark: Bool = false) {
        self.maximumLength = max(1, maximumLength)
        self.markMatched = dropsByteOrderMark ? 0 : nil
    }

    /// Feeds bytes, calling `line` with each line they complete (as raw bytes, ending removed).
    /// - Parameters:
    ///   - bytes: The next bytes.
    ///   - line: Receives each completed line.
    /// - Throws: ``CourierError/Cause/decodingFailed(_:)`` for a line longer than ``maximumLength``.
    public mutating func feed(bytes: some Collection<UInt8>, _ line: (ArraySlice<UInt8>) throws -> Void) throws {
        try scan(bytes: Array(bytes), line)
    }

    /// Feeds bytes, calling `line` with each line they complete, decoded as UTF-8 (invalid bytes
    /// become U+FFFD).
    /// - Parameters:
    ///   - data: The next bytes.
    ///   - line: Receives each completed line.
    /// - Throws: ``CourierError/Cause/decodingFailed(_:)`` for a line longer than ``maximumLength``.
    public mutating func feed(_ data: Data, _ line: (String) throws -> Void) throws {
        try scanData(data) { try line(String(decoding: $0, as: UTF8.self)) }
    }

    /// Ends the input: emits the last line if it has no ending.
    /// - Parameter line: Receives the last line.
    public mutating func finish(_ line: (String) throws -> Void) rethrows {
        try finishBytes { try line(String(decoding: $0, as: UTF8.self)) }
    }

    /// Ends the input: emits the last line (as bytes) if it has no ending.
    /// - Parameter line: Receives the last line.
    public mutating func finishBytes(_ line: (ArraySlice<UInt8>) throws -> Void) rethrows {
        if let matched = markMatched, matched < 3 {
            pending.insert(contentsOf: Self.byteOrderMark.prefix(matched), at: 0)
            markMatched = nil
        }
        guard !pending.isEmpty else { return }
        let last = pending
        pending = []
        lineNumber += 1
        try line(last[...])
    }

    mutating func scanData(_ data: Data, _ line: (ArraySlice<UInt8>) throws -> Void) throws {
        try data.withUnsafeBytes { raw in
            try scan(buffer: raw.bindMemory(to: UInt8.self), line)
        }
    }

    private mutating func scan(bytes: [UInt8], _ line: (ArraySlice<UInt8>) throws -> Void) throws {
        try bytes.withUnsafeBufferPointer { try scan(buffer: $0, line) }
    }

    private mutating func scan(buffer: UnsafeBufferPointer<UInt8>, _ line: (ArraySlice<UInt8>) throws -> Void) throws {
        var start = 0
        let count = buffer.count
        if let matched = markMatched {
            var seen = matched
            while seen < 3, start < count, buffer[start] == Self.byteOrderMark[seen] {
                seen += 1
                start += 1
            }
            if seen == 3 {
                markMatched = nil
            } else if start == count {
                markMatched = seen  // the chunk ended inside what may be a mark
                return
            } else {
                // Not a mark after all: the bytes held back are the start of the first line.
                pending.append(contentsOf: Self.byteOrderMark.prefix(seen))
                markMatched = nil
            }
        }
        if afterCR, start < count {
            afterCR = false
            if buffer[start] == 0x0A { start += 1 }
        }
        var index = start
        while index < count {
            let byte = buffer[index]
            guard byte == 0x0A || byte == 0x0D else {
                index += 1
                continue
            }
            let piece = UnsafeBufferPointer(rebasing: buffer[start..<index])
            try check(adding: piece.count)
            lineNumber += 1
            if pending.isEmpty {
                try line(ArraySlice(piece))
            } else {
                pending.append(contentsOf: piece)
                let whole = pending
                pending.removeAll(keepingCapacity: true)
                try line(whole[...])
            }
            index += 1
            if byte == 0x0D {
                if index < count {
                    if buffer[index] == 0x0A { index += 1 }
                } else {
                    afterCR = true
                }
            }
            start = index
        }
        if start < count {
            let rest = UnsafeBufferPointer(rebasing: buffer[start..<count])
            try check(adding: rest.count)
            pending.append(contentsOf: rest)
        }
    }

    private func check(adding count: Int) throws {
        guard pending.count + count > maximumLength else { return }
        throw CourierError(
            .decodingFailed(
                DecodingFailure(
                    typeName: "line", message: "line \(lineNumber + 1) is longer than \(maximumLength) bytes",
                    bodySnippet: BodySnippet.make(from: Data(pending.prefix(64))))))
    }

    private static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]
}

extension ByteStream {
    /// The body as lines of UTF-8 text, split at CR, LF or CRLF (across chunks correctly); the
    /// last line needs no ending. Lines longer than 1 MiB are an error; see
    /// ``lines(maximumLength:)``.
    public var lines: Lines { Lines(base: self, maximumLength: LineSplitter.defaultMaximumLength) }

    /// The body as lines of UTF-8 text, refusing lines longer than `maximumLength` bytes.
    /// - Parameter maximumLength: The longest line accepted.
    /// - Returns: The lines.
    public func lines(maximumLength: Int) -> Lines { Lines(base: self, maximumLength: maximumLength) }

    /// The lines of a ``ByteStream``.
    public struct Lines: AsyncSequence, Sendable {
        /// A line, without its ending.
        public typealias Element = String
        /// Errors thrown while reading.
        public typealias Failure = CourierError
        let base: ByteStream
        let maximumLength: Int

        /// Creates the iterator.
        public func makeAsyncIterator() -> Iterator {
            Iterator(lines: ParsingIterator(base.makeAsyncIterator(), parser: TextLines(splitter: LineSplitter(maximumLength: maximumLength))))
        }

        /// Reads the lines.
        public struct Iterator: AsyncIteratorProtocol {
            var lines: ParsingIterator<TextLines>

            /// The next line, or `nil` at the end of the body.
            /// - Throws: The stream's ``CourierError``, or a line that is too long.
            public mutating func next() async throws(CourierError) -> String? {
                try await lines.next(isolation: nil)
            }

            /// The next line, read without leaving `actor` (see ``ByteStream/Iterator/next(isolation:)``).
            /// - Parameter actor: The actor the reader runs on, if any.
            /// - Throws: The stream's ``CourierError``, or a line that is too long.
            public mutating func next(isolation actor: isolated (any Actor)?) async throws(CourierError) -> String? {
                try await lines.next(isolation: actor)
            }
        }
    }
}
