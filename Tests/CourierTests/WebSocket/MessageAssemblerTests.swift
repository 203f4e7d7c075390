import Courier
import Foundation
import Testing

@testable import CourierWebSocket

/// RFC 6455 §5.4–5.5 as a receiver holds them: fragments put together, control frames between
/// them, UTF-8 checked as it arrives, the message limit, close frames read strictly.
@Suite("WebSocket messages: fragments, UTF-8, limits, close frames")
struct MessageAssemblerTests {
    static func frame(_ opcode: WebSocketOpcode, _ bytes: [UInt8], final: Bool = true) -> WebSocketFrame {
        WebSocketFrame(opcode, payload: Data(bytes), isFinal: final)
    }

    @Test("fragments make one message, with control frames between them")
    func fragments() throws {
        var assembler = MessageAssembler(maximumMessageSize: 100)
        #expect(try assembler.take(Self.frame(.text, Array("Hel".utf8), final: false)) == nil)
        #expect(try assembler.take(Self.frame(.ping, [1])) == .ping(Data([1])))
        #expect(try assembler.take(Self.frame(.continuation, Array("lo, ".utf8), final: false)) == nil)
        #expect(try assembler.take(Self.frame(.pong, [])) == .pong(Data()))
        #expect(try assembler.take(Self.frame(.continuation, Array("world".utf8))) == .message(.text("Hello, world")))
        #expect(try assembler.take(Self.frame(.binary, [1, 2, 3])) == .message(.binary(Data([1, 2, 3]))))
        #expect(try assembler.take(Self.frame(.text, [])) == .message(.text("")))
    }

    @Test("a continuation with nothing to continue, or a new message inside a fragmented one, is a protocol error")
    func fragmentOrder() {
        var lone = MessageAssembler(maximumMessageSize: 100)
        #expect(throws: WebSocketFailure.self) { try lone.take(Self.frame(.continuation, [1])) }
        var nested = MessageAssembler(maximumMessageSize: 100)
        _ = try? nested.take(Self.frame(.binary, [1], final: false))
        #expect(throws: WebSocketFailure.self) { try nested.take(Self.frame(.text, [0x61])) }
    }

    @Test("a message over the limit fails as its fragments add up, before it is kept (1009)")
    func messageLimit() throws {
        var assembler = MessageAssembler(maximumMessageSize: 10)
        #expect(try assembler.take(Self.frame(.binary, Array(repeating: 0, count: 6), final: false)) == nil)
        do {
            _ = try assembler.take(Self.frame(.continuation, Array(repeating: 0, count: 5)))
            Issue.record("an 11-byte message passed a 10-byte limit")
        } catch {
            #expect(error.kind == .messageTooLarge)
            #expect(error.closeCode == .messageTooBig)
        }
    }

    /// Byte sequences that are not UTF-8 (RFC 3629): overlong forms, surrogates, above U+10FFFF,
    /// stray continuation bytes, truncated sequences.
    static let invalidUTF8: [[UInt8]] = [
        [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xF0, 0x80, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF],
        [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xFF], [0x80], [0xCE, 0xBA, 0xE1, 0xBD], [0xE2, 0x82],
        [0x61, 0xC1, 0xBF],
    ]

    @Test("text that is not UTF-8 closes with 1007", arguments: invalidUTF8)
    func invalidText(bytes: [UInt8]) {
        var assembler = MessageAssembler(maximumMessageSize: 100)
        do {
            _ = try assembler.take(Self.frame(.text, bytes))
            Issue.record("\(bytes) passed as UTF-8")
        } catch {
            #expect(error.kind == .invalidUTF8)
            #expect(error.closeCode == .invalidPayload)
        }
    }

    @Test("UTF-8 split across fragments at every byte is valid; a bad byte fails at its fragment, not at the end")
    func splitUTF8() throws {
        let text = "κόσμε 𝄞 €"
        let bytes = Array(text.utf8)
        for cut in 1..<bytes.count {
            var assembler = MessageAssembler(maximumMessageSize: 100)
            #expect(try assembler.take(Self.frame(.text, Array(bytes[..<cut]), final: false)) == nil)
            #expect(try assembler.take(Self.frame(.continuation, Array(bytes[cut...]))) == .message(.text(text)))
        }
        // The first fragment is already wrong: it fails there, without waiting for FIN.
        var early = MessageAssembler(maximumMessageSize: 100)
        #expect(throws: WebSocketFailure.self) { try early.take(Self.frame(.text, [0xCE, 0xBA, 0xFF], final: false)) }
        // A message that stops inside a character fails at its end.
        var truncated = MessageAssembler(maximumMessageSize: 100)
        #expect(try truncated.take(Self.frame(.text, [0x61, 0xE2, 0x82], final: false)) == nil)
        #expect(throws: WebSocketFailure.self) { try truncated.take(Self.frame(.continuation, [])) }
    }

    @Test("every valid scalar range passes")
    func validRanges() {
        for scalar in ["\u{0}", "\u{7F}", "\u{80}", "\u{7FF}", "\u{800}", "\u{D7FF}", "\u{E000}", "\u{FFFF}", "\u{10000}", "\u{10FFFF}"] {
            #expect(UTF8Validation.isValid(Array(scalar.utf8)), "\(scalar.unicodeScalars.first!.value)")
        }
    }

    @Test("runs of ASCII read eight bytes at a time: a bad or multi-byte character at every offset, in Data, arrays and slices")
    func asciiRuns() {
        let bad: [[UInt8]] = [[0xFF], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82]]
        let good: [[UInt8]] = [Array("é".utf8), Array("€".utf8), Array("𝄞".utf8)]
        for offset in 0..<40 {
            let ascii = [UInt8](repeating: 0x61, count: offset)
            for character in good {
                let bytes = ascii + character + ascii
                #expect(UTF8Validation.isValid(bytes) && UTF8Validation.isValid(Data(bytes)) && UTF8Validation.isValid(bytes[...]))
                // Split anywhere, as fragments are: still valid as a whole.
                var split = UTF8Validation()
                #expect(split.take(Data(bytes[..<(offset + 1)])) && split.take(Data(bytes[(offset + 1)...])) && split.isComplete)
            }
            for character in bad {
                let bytes = ascii + character + ascii
                #expect(!UTF8Validation.isValid(bytes), "\(character) after \(offset) bytes")
                #expect(!UTF8Validation.isValid(Data(bytes)), "\(character) after \(offset) bytes")
                #expect(!UTF8Validation.isValid(AnySequence(bytes)), "\(character) after \(offset) bytes")
            }
        }
    }

    @Test("close frames: empty, a code, a code and a reason")
    func closeFrames() throws {
        var assembler = MessageAssembler(maximumMessageSize: 100)
        #expect(try assembler.take(Self.frame(.close, [])) == .close(nil, ""))
        #expect(try assembler.take(Self.frame(.close, [0x03, 0xE8])) == .close(.normalClosure, ""))
        #expect(try assembler.take(Self.frame(.close, [0x0F, 0xA0] + Array("bye ☃".utf8))) == .close(WebSocketCloseCode(rawValue: 4000), "bye ☃"))
    }

    @Test("a close frame of one byte, with a code that may not be sent, or with a reason that is not UTF-8 fails", arguments: [
        [0x03], [0x03, 0xED], [0x03, 0xEE], [0x03, 0xF7], [0x00, 0x00], [0x03, 0xE7], [0x0B, 0xB7], [0x13, 0x88], [0x03, 0xE8, 0xFF],
    ] as [[UInt8]])
    func badCloseFrames(payload: [UInt8]) {
        var assembler = MessageAssembler(maximumMessageSize: 100)
        #expect(throws: WebSocketFailure.self) { try assembler.take(Self.frame(.close, payload)) }
    }
}
