import Courier
import Foundation
import Testing

/// Media types as a response's decoder compares them: the rules the `MediaType` fuzz target
/// (Fuzz/Targets/MediaType.swift) checks.
@Suite("Encoding: media types")
struct MediaTypeTests {
    @Test(arguments: [
        ("application/json", "application/json"), ("application/json", "Application/JSON; charset=utf-8"),
        ("application/json", "application/problem+json"), ("*/*", "text/plain"), ("text/*", "text/event-stream"),
    ])
    func aWellFormedTypeMatches(_ expected: String, _ received: String) {
        #expect(MediaType(rawValue: expected).matches(MediaType(rawValue: received)))
    }

    /// Found by the fuzz target: `/\t\t/*…` read as type `\t\t` (the empty type before the first
    /// slash was skipped), so it matched `*/*` but not `\t\t/*`. A media type is two tokens
    /// around one slash; anything else matches nothing, not even `*/*`.
    @Test(arguments: ["/json", "application/", "application/json/extra", "/\t\t/*`//*`* * +", "appli cation/json", "application/x json+json", "application", ""])
    func aMalformedTypeMatchesNothing(_ value: String) {
        let type = MediaType(rawValue: value)
        #expect(!MediaType.any.matches(type))
        #expect(!MediaType.json.matches(type))
        #expect(!type.matches(type))
    }

    /// The parameters start at the `;` byte only: a Greek question mark (U+037E) is the same
    /// Character as `;` to Swift (canonically equivalent) but another byte sequence, and no
    /// server reads it as a separator. (CI's 30-second MediaType run found it: the target's rule
    /// compared Characters, so the rule was fixed, not the parser.)
    @Test func aGreekQuestionMarkIsNotAParameterSeparator() {
        let type = MediaType(rawValue: "Application/JSON\u{37E} charset=utf-8")
        #expect(type.essence == "application/json\u{37E} charset=utf-8")
        #expect(!MediaType.json.matches(type))
        #expect(MediaType(rawValue: "application/json; charset=utf-8").essence == "application/json")
    }

    /// A server's malformed `Content-Type` (a space in the subtype, which read as a `+json`
    /// suffix) is refused by a resource that validates it, with the value it sent in the error.
    @Test func aResponseWithAMalformedContentTypeIsNotDecoded() async {
        let executor = InMemoryExecutor { _ in .status(200, headers: ["Content-Type": "application/x json+json"], body: Data("{}".utf8)) }
        struct Empty: Decodable {}
        let error = await expectCourierError { _ = try await executor.send((.get |> url("https://api.test/x") |> decode(Empty.self)).validate(contentType: .json)) }
        guard case .unacceptableContentType(_, let received)? = error?.cause else {
            Issue.record("expected unacceptableContentType, got \(String(describing: error))")
            return
        }
        #expect(received?.rawValue == "application/x json+json")
    }

    /// Found by the MediaType fuzz target in CI's 30-second run: a ";" after U+070F (a prepend
    /// mark) joins it in one Character, so a Character split kept the parameters in the essence.
    @Test func aSemicolonAfterAPrependMarkStillEndsTheEssence() {
        #expect(MediaType(rawValue: "application/json\u{70F};charset=utf-8").essence == "application/json\u{70F}")
        #expect(!MediaType(rawValue: "text/plain\u{70F};x=1").essence.contains(";"))
    }
}
