import Foundation
import Testing

@_spi(Transports) @testable import CourierCore

/// The trimming and replacing the core does itself (FoundationEssentials has neither character
/// sets nor `replacingOccurrences`), against Foundation's where they mean the same.
@Suite("Text helpers without Foundation")
struct TextHelpersTests {
    @Test(arguments: ["", " ", "\t\t", "a", " a ", "\ta b\t", "  a  b  ", "\u{A0}a\u{A0}", "a\r\n"])
    func whitespaceIsTrimmedAsFoundationTrimsWhitespaceAndNewlines(text: String) {
        #expect(text.trimmingWhitespace() == text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// HTTP's optional whitespace is a space or a tab: a no-break space or a line break around a
    /// field value is part of it, not padding (RFC 9110, section 5.6.3).
    @Test func optionalWhitespaceIsOnlySpacesAndTabs() {
        #expect(" \t bytes 0-1/2 \t ".trimmingOptionalWhitespace() == "bytes 0-1/2")
        #expect("\u{A0}5\u{A0}".trimmingOptionalWhitespace() == "\u{A0}5\u{A0}")
        #expect("\r\n5".trimmingOptionalWhitespace() == "\r\n5")
        #expect(" \t ".trimmingOptionalWhitespace().isEmpty)
        #expect(Substring(" a ").trimmingOptionalWhitespace() == "a")
    }

    @Test(arguments: [
        ("a,b,,c", ",", "%2C"), ("", ",", "x"), ("abc", "", "x"), ("aaa", "aa", "b"), ("%20%20", "%20", "+"),
        ("it's 'quoted'", "'", "'\\''"), ("no match", "zz", "y"), ("é", "e", "x"), ("ab", "ab", ""),
    ])
    func replacingAllReplacesAsFoundationDoes(text: String, target: String, replacement: String) {
        let foundation = target.isEmpty ? text : text.replacingOccurrences(of: target, with: replacement)
        #expect(text.replacingAll(target, with: replacement) == foundation)
    }

    /// A JSON string escapes control characters as `\u00XX`, in lower-case hex as before.
    @Test func controlCharactersAreEscapedInJSONStrings() {
        #expect(JSONSyntax.escaped("\u{1}\u{1F}\u{0}a") == "\"\\u0001\\u001f\\u0000a\"")
    }
}
