import Courier
import Foundation
import Testing

/// Splits `data` at random points (seeded, so a failure reproduces).
func randomChunks(_ data: Data, seed: UInt64, maximum: Int = 7) -> [Data] {
    let random = RandomSource.seeded(seed)
    var chunks: [Data] = []
    var index = data.startIndex
    while index < data.endIndex {
        let size = 1 + Int(random.next() % UInt64(maximum))
        let end = min(data.endIndex, index + size)
        chunks.append(data[index..<end])
        index = end
    }
    return chunks
}

private func lines(_ chunks: [Data], maximumLength: Int = 1 << 20) throws -> [String] {
    var splitter = LineSplitter(maximumLength: maximumLength)
    var out: [String] = []
    for chunk in chunks { try splitter.feed(chunk) { out.append($0) } }
    splitter.finish { out.append($0) }
    return out
}

private func events(_ chunks: [Data]) throws -> [ServerSentEvent] {
    var parser = ServerSentEventParser()
    var out: [ServerSentEvent] = []
    for chunk in chunks { try parser.feed(chunk) { out.append($0) } }
    parser.finish()
    return out
}

@Suite("Streaming: line, NDJSON and server-sent event parsers")
struct ParserTests {
    @Test func linesEndAtCRLFAndCRLF() throws {
        #expect(try lines([Data("a\nb\rc\r\nd".utf8)]) == ["a", "b", "c", "d"])
        #expect(try lines([Data("a\n\nb\r\r\n".utf8)]) == ["a", "", "b", ""])
        #expect(try lines([Data("".utf8)]) == [])
        #expect(try lines([Data("\n".utf8)]) == [""])
    }

    /// A CRLF split across two chunks is one ending, not two.
    @Test func crlfSplitAcrossChunksIsOneEnding() throws {
        #expect(try lines([Data("a\r".utf8), Data("\nb".utf8)]) == ["a", "b"])
        #expect(try lines([Data("a\r".utf8), Data("\r\n".utf8), Data("b".utf8)]) == ["a", "", "b"])
    }

    @Test(arguments: 0..<40)
    func anyChunkingGivesTheSameLines(seed: Int) throws {
        let text = "first\r\nsecond\nthird\r\rfifth\r\n\r\nünïcödé 😀 line\nlast without ending"
        let whole = try lines([Data(text.utf8)])
        #expect(whole == ["first", "second", "third", "", "fifth", "", "ünïcödé 😀 line", "last without ending"])
        #expect(try lines(randomChunks(Data(text.utf8), seed: UInt64(seed))) == whole)
    }

    @Test func aLineLongerThanTheLimitIsAnErrorNotABuffer() {
        #expect(throws: CourierError.self) { try lines([Data(repeating: 0x61, count: 100)], maximumLength: 64) }
        #expect(throws: CourierError.self) { try lines(Array(repeating: Data("aaaa".utf8), count: 40), maximumLength: 64) }
        #expect((try? lines([Data(repeating: 0x61, count: 64)], maximumLength: 64)) == [String(repeating: "a", count: 64)])
    }

    // MARK: Server-sent events (WHATWG HTML §9.2.6)

    @Test func dataLinesJoinWithLFAndTheTypeDefaultsToMessage() throws {
        let parsed = try events([Data("data: first\ndata:second\ndata\n\n".utf8)])
        #expect(parsed == [ServerSentEvent(event: "message", data: "first\nsecond\n")])
    }

    @Test func onlyOneLeadingSpaceIsRemoved() throws {
        #expect(try events([Data("data:  two spaces\n\n".utf8)]).map(\.data) == [" two spaces"])
    }

    @Test func commentsAndUnknownFieldsAreIgnored() throws {
        let parsed = try events([Data(": keep-alive\nfoo: bar\ndata: x\n: more\n\n".utf8)])
        #expect(parsed.map(\.data) == ["x"])
    }

    @Test func eventTypeAppliesToOneEvent() throws {
        let parsed = try events([Data("event: add\ndata: 1\n\ndata: 2\n\n".utf8)])
        #expect(parsed.map(\.event) == ["add", "message"])
    }

    @Test func idPersistsAndOneWithNULIsIgnored() throws {
        let parsed = try events([Data("id: 7\ndata: a\n\ndata: b\n\nid: x\u{0}y\ndata: c\n\nid\ndata: d\n\n".utf8)])
        #expect(parsed.map(\.id) == ["7", "7", "7", nil])
    }

    @Test func retryOnlyWhenAllDigits() throws {
        var parser = ServerSentEventParser()
        try parser.feed(Data("retry: 1500\n\nretry: 12a\n\nretry: -5\n\nretry:\n\n".utf8)) { _ in }
        #expect(parser.retry == 1500)
        try parser.feed(Data("retry: 20\n\n".utf8)) { _ in }
        #expect(parser.retry == 20)
    }

    @Test func emptyDataIsNotDispatchedButEmptyStringDataIs() throws {
        #expect(try events([Data("event: ping\n\n".utf8)]).isEmpty)
        #expect(try events([Data("data\n\n".utf8)]).map(\.data) == [""])
    }

    @Test func anUnfinishedEventAtTheEndIsDiscarded() throws {
        #expect(try events([Data("data: whole\n\ndata: cut".utf8)]).map(\.data) == ["whole"])
        #expect(try events([Data("data: whole\n\ndata: no blank line\n".utf8)]).map(\.data) == ["whole"])
    }

    @Test func aLeadingByteOrderMarkIsDropped() throws {
        let bom = Data([0xEF, 0xBB, 0xBF])
        #expect(try events([bom + Data("data: a\n\n".utf8)]).map(\.data) == ["a"])
        // Split inside the mark.
        #expect(try events([bom.prefix(1), bom.suffix(2) + Data("data: a\n\n".utf8)]).map(\.data) == ["a"])
        // Only one, and only at the start.
        #expect(try events([bom + bom + Data("\ndata: b\n\n".utf8)]).map(\.data) == ["b"])
    }

    @Test(arguments: 0..<60)
    func anyChunkingGivesTheSameEvents(seed: Int) throws {
        let stream =
            "\u{FEFF}: hello\r\nretry: 3000\r\nid: 1\revent: add\ndata: {\"a\":1}\r\ndata: second line\r\n\r\n"
            + "data: plain\n\nid: 2\ndata: ünï 😀\r\r:comment\rdata:x\n\nevent: ignored-unfinished\ndata: tail"
        let whole = try events([Data(stream.utf8)])
        #expect(
            whole == [
                ServerSentEvent(event: "add", data: "{\"a\":1}\nsecond line", id: "1", retry: 3000),
                ServerSentEvent(data: "plain", id: "1", retry: 3000),
                ServerSentEvent(data: "ünï 😀", id: "2", retry: 3000),
                ServerSentEvent(data: "x", id: "2", retry: 3000),
            ])
        #expect(try events(randomChunks(Data(stream.utf8), seed: UInt64(seed), maximum: 5)) == whole)
    }

    @Test func encodedEventsParseBack() throws {
        let original = [
            ServerSentEvent(event: "update", data: "line one\nline two", id: "42", retry: 100),
            ServerSentEvent(data: "", id: "43"),
        ]
        let wire = original.map(\.encoded).joined()
        let parsed = try events([Data(wire.utf8)])
        #expect(parsed.map(\.data) == original.map(\.data))
        #expect(parsed.map(\.event) == ["update", "message"])
        #expect(parsed.map(\.id) == ["42", "43"])
    }

    @Test func decodeNamesTheEventOnFailure() throws {
        struct Delta: Decodable { var text: String }
        let good = ServerSentEvent(data: #"{"text":"hi"}"#)
        #expect(try good.decode(Delta.self).text == "hi")
        let bad = ServerSentEvent(data: #"{"txt":"hi"}"#, id: "9")
        do {
            _ = try bad.decode(Delta.self)
            Issue.record("expected a decoding failure")
        } catch {
            guard case .decodingFailed(let failure) = error.cause else {
                Issue.record("got \(error)")
                return
            }
            #expect(failure.message.contains("id \"9\""))
        }
    }
}
