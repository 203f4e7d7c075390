@testable import CourierCore
import Foundation
import Testing

/// HTTP dates (RFC 9110 §5.6.7), read by Courier's own parser.
@Suite("Encoding: HTTP dates")
struct HTTPDateTests {
    let now = Date(timeIntervalSince1970: 1_795_000_000)  // 2026-11-18

    @Test(arguments: ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "  sun, 06 NOV 1994 08:49:37 GMT "])
    func theThreeFormatsNameTheSameInstant(_ value: String) {
        #expect(HTTPDate.parse(value, now: now) == Date(timeIntervalSince1970: 784_111_777))
    }

    /// A two-digit year more than 50 years ahead is the latest past year with those digits.
    @Test func anRFC850YearIsTheLatestNotMoreThan50YearsAhead() throws {
        let ahead = try #require(HTTPDate.parse("Friday, 01-Jan-76 00:00:00 GMT", now: now))
        #expect(ahead == Date(timeIntervalSince1970: 3_345_062_400))  // 2076: 50 years ahead at most
        let past = try #require(HTTPDate.parse("Saturday, 01-Jan-77 00:00:00 GMT", now: now))
        #expect(past == Date(timeIntervalSince1970: 220_924_800))  // 1977
    }

    @Test func aLeapDayIsADateOnlyInALeapYear() {
        #expect(HTTPDate.parse("Thu, 29 Feb 2024 12:00:00 GMT", now: now) == Date(timeIntervalSince1970: 1_709_208_000))
        #expect(HTTPDate.parse("Sun, 29 Feb 2026 12:00:00 GMT", now: now) == nil)
        #expect(HTTPDate.parse("Tue, 29 Feb 2100 12:00:00 GMT", now: now) == nil)
    }

    @Test func aLeapSecondReadsAsTheSecondBefore() {
        #expect(HTTPDate.parse("Sat, 31 Dec 2016 23:59:60 GMT", now: now) == Date(timeIntervalSince1970: 1_483_228_799))
    }

    @Test(arguments: [
        "", "Sun, 06 Nov 1994 08:49:37", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Nov 1994 08:49 GMT", "Sun, 06 Nov 1994 08:49:37 GMT x",
        "Sun, 00 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:60:37 GMT", "Foo, 06 Nov 1994 08:49:37 GMT", "Sun, 06 Nox 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 08:49:37 GMT\u{301}", "Su\u{651}  ", "Sun, 06 Nov 1994 08:49:37 GMT" + String(repeating: " x", count: 100),
        "Sun, 06 Nov -994 08:49:37 GMT", "Sun, ٠٦ Nov 1994 08:49:37 GMT",
    ])
    func anythingElseIsNoDate(_ value: String) {
        #expect(HTTPDate.parse(value, now: now) == nil)
    }
}
