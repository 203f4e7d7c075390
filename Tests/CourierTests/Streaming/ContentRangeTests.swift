@testable import CourierCore
import Foundation
import Testing

/// `Content-Range` as a resumed download reads it: the rules the `ContentRange` fuzz target
/// (Fuzz/Targets/ContentRange.swift) checks, with the inputs that broke them.
@Suite("Streaming: Content-Range")
struct ContentRangeTests {
    @Test func aRangeReadsItsStartEndAndTotal() throws {
        let range = try #require(ContentRange("bytes 500-999/1234"))
        #expect(range.start == 500 && range.end == 999 && range.total == 1234)
        #expect(range.length == 500)
        #expect(ContentRange("BYTES 0-0/*")?.total == nil)
    }

    @Test(arguments: ["bytes 999-500/1234", "bytes 0-999/999", "bytes -1-5/10", "bytes */1234", "bytes 5-/10", "items 0-1/2", ""])
    func aRangeThatIsNotOnePartOfAResourceIsRefused(_ value: String) {
        #expect(ContentRange(value) == nil)
    }

    /// Found by the fuzz target: `bytes 0-9223372036854775807/*` was accepted, and its length
    /// (end − start + 1) overflowed `Int64` and trapped. A part's length must fit.
    @Test(arguments: ["bytes 0-9223372036854775807/*", "bytes 0-9223372036854775807/9223372036854775807"])
    func aRangeWhoseLengthDoesNotFitIsRefused(_ value: String) {
        #expect(ContentRange(value) == nil)
    }

    @Test func theLargestRangeThatFitsIsRead() throws {
        let range = try #require(ContentRange("bytes 1-9223372036854775807/*"))
        #expect(range.length == Int64.max)
    }
}
