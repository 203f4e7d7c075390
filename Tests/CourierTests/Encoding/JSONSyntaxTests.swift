@testable import CourierCore
import Foundation
import Testing

/// JSON's grammar on bytes, against Foundation's parser.
@Suite("JSON syntax")
struct JSONSyntaxTests {
    private static let valid = [
        "{}", "[]", "0", "-0", "1.5e+10", "-12.25E-3", "\"\"", "true", "false", "null", " \t\r\n[ 1 , 2 ]\n",
        "{\"a\": {\"b\": [1, \"x\\\"y\\\\z\\/\\b\\f\\n\\r\\t\\u00e4\\uD83D\\uDE00\"]}, \"c\": null}",
        "[[[[]]], {}, {\"\": \"\"}]", "\"caf\u{E9} \u{1F600}\"", "[1e5, 0.5, -0.0e-0]",
    ]
    private static let invalid = [
        "", " ", "{", "}", "[1,]", "[,1]", "{\"a\"}", "{\"a\":}", "{\"a\" 1}", "{a: 1}", "{\"a\": 1,}", "01", "1.", ".5", "-",
        "1e", "1e+", "+1", "0x10", "tru", "nul", "truex", "\"abc", "\"\\x\"", "\"\\u12\"", "\"\\u12g4\"", "\"a\u{1}b\"",
        "[1] [2]", "{} x", "NaN", "Infinity", "[1 2]", "{\"a\":1 \"b\":2}", "// c\n1", "'a'", "[\"a\",]",
        // What no reader can decode: a lone surrogate, a number past Double's range.
        "\"\\uD83D\"", "\"\\uDE00\\uD83D\"", "\"\\uD83Dx\"", "\"\\uD83D\\u0041\"", "1e400", "-1.5e+310",
        "[\"\\uDE00\"]",
    ]

    @Test(arguments: valid)
    func acceptsWhatTheGrammarAllows(_ text: String) {
        #expect(JSONSyntax.isValid(Array(text.utf8)))
        #expect((try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])) != nil, "Foundation agrees")
    }

    @Test(arguments: invalid)
    func refusesWhatItDoesNot(_ text: String) {
        #expect(!JSONSyntax.isValid(Array(text.utf8)))
    }

    /// Deep nesting is read without recursion, and refused past the limit.
    @Test func nestingIsBoundedAndNeedsNoStack() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(!JSONSyntax.isValid(Array(deep.utf8)))
        #expect(JSONSyntax.isValid(Array(deep.utf8), maximumDepth: 100_000))
        let limit = String(repeating: "{\"a\":", count: 512) + "1" + String(repeating: "}", count: 512)
        #expect(JSONSyntax.isValid(Array(limit.utf8)))
        #expect(!JSONSyntax.isValid(Array(limit.utf8), maximumDepth: 511))
    }

    /// What the grammar accepts Foundation accepts too, over many mutations of valid texts that
    /// stay valid UTF-8 (a fixed seed): a body the redactor treats as JSON is one a reader would
    /// parse.
    @Test func whatItAcceptsFoundationAccepts() {
        var state: UInt64 = 0x4A53_4F4E
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        let pieces = Array("{}[],:\"\\ 0123456789.eE+-truefalsenullu".utf8)
        for _ in 0..<5_000 {
            var bytes = Array(Self.valid[next(Self.valid.count)].utf8)
            for _ in 0..<(1 + next(3)) {
                let position = next(bytes.count + 1)
                switch next(3) {
                case 0: bytes.insert(pieces[next(pieces.count)], at: position)
                case 1: if position < bytes.count { bytes.remove(at: position) }
                default: if position < bytes.count { bytes[position] = pieces[next(pieces.count)] }
                }
            }
            // The redactor's text is a String: valid UTF-8, which the grammar does not check.
            guard String(validating: bytes, as: UTF8.self) != nil, JSONSyntax.isValid(bytes) else { continue }
            #expect((try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])) != nil, "\(String(decoding: bytes, as: UTF8.self))")
        }
    }
}
