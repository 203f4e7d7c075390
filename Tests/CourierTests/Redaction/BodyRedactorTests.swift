@testable import CourierCore
import Foundation
import Testing

/// The redactor on bodies a fuzzer found, each test named for the rule it broke.
@Suite("Redaction: bodies found by fuzzing")
struct BodyRedactorTests {
    /// Found by the BodyRedactor fuzz target (2026-11-26, in its third run): a JSON string
    /// holding form text whose sensitive value has an escaped quote. The value ended at the
    /// quote, so the backslash before it was hidden, the quote closed the string (invalid JSON)
    /// and the rest of the value showed.
    @Test func aJSONStringThatHoldsAFormStaysValidJSON() throws {
        let secrets = ["A", "\u{FFFD};\nu0007k\"X&pass\"word=iv-\u{FFFD}m1\\\"23\"X&password=ive-m5\\\"123/"]
        let body = #""X&password=ive5\"123Sus3=,""#
        let output = BodyRedactor(redaction: Redaction(), secrets: secrets).redact(body)
        #expect((try? JSONSerialization.jsonObject(with: Data(output.utf8), options: [.fragmentsAllowed])) != nil, "\(output)")
        #expect(!output.contains("ive5") && !output.contains("123Sus3"), "\(output)")
    }

    // Escapes written out: a raw string literal in `@Test(arguments:)` loses its backslashes.
    @Test(arguments: [
        ("\"password=abc\\\"def&x=1\"", "\"password=<redacted>&x=1\""),
        ("\"password=abc\\\"", "\"password=<redacted>"),
        ("password=abc\\\\\"&x", "password=<redacted>\"&x"),
    ])
    func aSensitiveValueRunsOnPastAnEscapedQuoteOnly(body: String, expected: String) {
        #expect(BodyRedactor(redaction: Redaction(), secrets: []).redact(body) == expected)
    }

    /// A header line's name ends at its first `:` byte, whatever follows it: `:` and a combining
    /// mark make one Character, so a search by Character found no colon and showed the value.
    @Test(arguments: ["Authorization:\u{301} Bearer abc-123-secret", "x: 1\nX-Api-Key:\u{301}\u{302} abc-123-secret\r\ny: 2"])
    func aHeaderLineNameEndsAtTheColonByte(body: String) {
        let output = BodyRedactor(redaction: Redaction(), secrets: []).redact(body)
        #expect(!output.contains("abc-123-secret"), "\(output)")
        #expect(output.contains(Redaction.placeholder), "\(output)")
    }

    /// An event stream's `data:` field is found by bytes as a reader finds it, and its JSON
    /// redacted, whatever Character the colon starts.
    @Test func aDataFieldWhoseColonCarriesACombiningMarkIsStillRedactedAsData() {
        let body = "data:\u{301}{\"password\": \"hunter2-pass\"}\n\n"
        let output = BodyRedactor(redaction: Redaction(), secrets: []).redact(body)
        #expect(!output.contains("hunter2-pass"), "\(output)")
    }

    /// An echoed secret is hidden whatever follows it: a combining mark after its last letter
    /// joins that letter's Character, not the secret's bytes.
    @Test(arguments: ["s3cret-value\u{301}", "x s3cret-value\u{20DD} y", "\u{301}s3cret-value"])
    func anEchoedSecretIsHiddenInsideAGraphemeCluster(body: String) {
        let output = BodyRedactor(redaction: Redaction(), secrets: ["s3cret-value"]).redact(body)
        #expect(!output.utf8.elementsEqual("s3cret-value".utf8) && !Array(output.utf8).contains(Array("s3cret-value".utf8)), "\(output)")
    }

    /// A secret echoed by a server that normalises text (NFC or NFD) is hidden too.
    @Test(arguments: [("caf\u{E9}-pa55", "caf\u{65}\u{301}-pa55"), ("caf\u{65}\u{301}-pa55", "caf\u{E9}-pa55")])
    func anEchoedSecretIsHiddenInEitherNormalForm(secret: String, echoed: String) {
        let output = BodyRedactor(redaction: Redaction(), secrets: [secret]).redact("echo: " + echoed)
        #expect(output == "echo: " + Redaction.placeholder, "\(output)")
    }

    /// A body cut inside a secret hides what of it was kept, on bytes: the start of a secret
    /// with letters outside ASCII too.
    @Test func theStartOfASecretAtTheEndOfACutBodyIsHidden() {
        let redactor = BodyRedactor(redaction: Redaction(), secrets: ["p\u{E4}ss-w\u{F6}rd-123"])
        #expect(redactor.redact("x=1 p\u{E4}ss-w\u{F6}", truncated: true) == "x=1 " + Redaction.placeholder)
        #expect(redactor.redact("x=1 p\u{E4}s", truncated: true) == "x=1 " + Redaction.placeholder)
        #expect(redactor.redact("x=1 p\u{E4}", truncated: true) == "x=1 p\u{E4}", "three bytes are not enough to say")
    }
}

