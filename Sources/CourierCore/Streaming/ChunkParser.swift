#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Turns the chunks of a body into items (lines, events), keeping what straddles two chunks.
///
/// Every parsed view of a ``ByteStream`` (``ByteStream/lines``, ``ByteStream/ndjson(_:decoder:maximumLineLength:)``,
/// ``ByteStream/serverSentEvents``, ``EventSource``) reads through one ``ParsingIterator`` over
/// one of these.
protocol ChunkParser: Sendable {
    /// What the parser produces.
    associatedtype Item
    /// Parses `chunk`, appending the items it completes.
    mutating func parse(_ chunk: Data, into items: inout [Item]) throws(CourierError)
    /// The body ended: appends what the last chunk left complete (a last line without an ending).
    mutating func end(into items: inout [Item])
}

/// Reads a ``ByteStream`` through a ``ChunkParser``: chunks are read until items are ready, then
/// handed out one by one. A parser failure stops the transfer (through the stream's own API) and
/// is thrown.
struct ParsingIterator<Parser: ChunkParser> {
    private var base: ByteStream.Iterator
    /// The parser, with the state it carries between chunks (an event stream's last id).
    private(set) var parser: Parser
    private var ready: [Parser.Item] = []
    private var index = 0
    private var ended = false

    init(_ base: ByteStream.Iterator, parser: Parser) {
        self.base = base
        self.parser = parser
    }

    /// The next item, or `nil` once the body ended and every item was handed out; read on
    /// `actor` without leaving it.
    mutating func next(isolation actor: isolated (any Actor)?) async throws(CourierError) -> Parser.Item? {
        while index == ready.count {
            ready.removeAll(keepingCapacity: true)
            index = 0
            guard !ended else { return nil }
            if let chunk = try await base.next(isolation: actor) {
                do {
                    try parser.parse(chunk, into: &ready)
                } catch {
                    base.stop(error)
                    throw error
                }
            } else {
                ended = true
                parser.end(into: &ready)
            }
        }
        defer { index += 1 }
        return ready[index]
    }

    /// Stops the transfer with `error` and hands out nothing more: the reader gives up (a
    /// terminator event, a value that does not decode).
    mutating func stop(_ error: CourierError) {
        base.stop(error)
        ended = true
        ready.removeAll()
        index = 0
    }
}

/// Lines as text, for ``ByteStream/lines``.
struct TextLines: ChunkParser {
    var splitter: LineSplitter

    mutating func parse(_ chunk: Data, into items: inout [String]) throws(CourierError) {
        do {
            try splitter.feed(chunk) { items.append($0) }
        } catch {
            throw CourierError.wrapping(error, request: nil)
        }
    }

    mutating func end(into items: inout [String]) {
        splitter.finish { items.append($0) }
    }
}

/// Lines as bytes with their numbers (counting from 1), for ``ByteStream/ndjson(_:decoder:maximumLineLength:)``.
struct NumberedLines: ChunkParser {
    var splitter: LineSplitter
    private var count = 0

    init(splitter: LineSplitter) { self.splitter = splitter }

    mutating func parse(_ chunk: Data, into items: inout [(number: Int, line: Data)]) throws(CourierError) {
        var count = self.count
        do {
            try splitter.scanData(chunk) { line in
                count += 1
                items.append((count, Data(line)))
            }
        } catch {
            throw CourierError.wrapping(error, request: nil)
        }
        self.count = count
    }

    mutating func end(into items: inout [(number: Int, line: Data)]) {
        var count = self.count
        splitter.finishBytes { line in
            count += 1
            items.append((count, Data(line)))
        }
        self.count = count
    }
}

extension ServerSentEventParser: ChunkParser {
    mutating func parse(_ chunk: Data, into items: inout [ServerSentEvent]) throws(CourierError) {
        do {
            try feed(chunk) { items.append($0) }
        } catch {
            throw CourierError.wrapping(error, request: nil)
        }
    }

    /// An event without its closing blank line is dropped, as the specification says.
    mutating func end(into items: inout [ServerSentEvent]) {
        finish()
    }
}
