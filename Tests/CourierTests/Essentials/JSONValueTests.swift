import Foundation
import Testing

@testable import CourierCore

/// JSON read as values without `JSONSerialization` (FoundationEssentials has none): what the HAR
/// replayer compares bodies with and the redactor asks whether bytes are JSON.
@Suite("JSON values without JSONSerialization")
struct JSONValueTests {
    @Test func objectsAreEqualWhateverTheirKeyOrder() {
        let a = JSONValue.decode(Data(#"{"b":[1,2,{"x":null}],"a":"é","c":true}"#.utf8))
        let b = JSONValue.decode(Data(#"{ "c": true, "a": "\u00e9", "b": [1, 2, {"x": null}] }"#.utf8))
        #expect(a != nil && a == b)
    }

    @Test func differentValuesAreNotEqual() {
        let pairs = [(#"[1,2]"#, #"[2,1]"#), (#"{"a":1}"#, #"{"a":1,"b":2}"#), (#""1""#, "1"), ("true", "1"), ("null", "false"), ("1.5", "1")]
        for (left, right) in pairs {
            #expect(JSONValue.decode(Data(left.utf8)) != JSONValue.decode(Data(right.utf8)), "\(left) \(right)")
        }
    }

    @Test func numbersCompareByValue() {
        #expect(JSONValue.decode(Data("1".utf8)) == JSONValue.decode(Data("1.0".utf8)))
        #expect(JSONValue.decode(Data("9223372036854775807".utf8)) == .integer(.max))
        #expect(JSONValue.decode(Data("1e3".utf8)) == .integer(1000))
    }

    @Test func fragmentsAndOtherEncodingsAreJSON() {
        #expect(JSONValue.decode(Data("\"text\"".utf8)) == .string("text"))
        let utf16 = Data(#"{"token":"x"}"#.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] })
        #expect(JSONValue.decode(utf16) == .object(["token": .string("x")]))
    }

    /// Foundation's reader takes a little more than the grammar, as `JSONSerialization` did: a
    /// trailing comma, a byte-order mark.
    @Test(arguments: ["[1,]", #"{"a":1,}"#, "\u{FEFF}[1]"])
    func whatFoundationsReaderTakesBeyondTheGrammarIsRead(text: String) {
        #expect(JSONValue.decode(Data(text.utf8)) != nil)
    }

    @Test(arguments: ["", "{", "[1] x", "{'a':1}", "nul", "1 2", "\u{FEFF}"])
    func textThatIsNotJSONIsNot(text: String) {
        #expect(JSONValue.decode(Data(text.utf8)) == nil)
    }

    /// Strict JSON is read by Courier's own parser; it reads every document as `JSONDecoder`
    /// does (escapes, surrogate pairs, big and negative numbers, exponents, nesting, spaces).
    @Test(arguments: [
        #"{"a":[1,-2,3.5,-0.25e2,1E300,12345678901234567890,-9223372036854775808],"b":{"c":null,"d":[true,false]}}"#,
        #" [ "\u00e9\ud83d\ude00\n\"\\\/" , "" , "plain" ] "#, "0", "-0", "1e-7", #""only""#, "[]", "{}", "[[[[[]]]]]",
        #"{"dup":1,"dup":2}"#, #"{"é":"ü","😀":{}}"#,
    ])
    func strictJSONIsReadAsTheDecoderReadsIt(text: String) throws {
        let bytes = Array(text.utf8)
        try #require(JSONSyntax.isValid(bytes))
        let decoded = try JSONDecoder().decode(JSONValue.self, from: Data(bytes))
        #expect(JSONValue.parse(valid: bytes) == decoded)
        #expect(JSONValue.decode(Data(bytes)) == decoded)
    }

    /// Nested deeper than the decoder reads is refused, not a crash.
    @Test func deepNestingIsRefusedWithoutCrashing() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(JSONValue.decode(Data(deep.utf8)) == nil)
    }
}
