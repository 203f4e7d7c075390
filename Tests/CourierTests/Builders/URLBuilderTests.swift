import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import Testing

@Suite("URL builders")
struct URLBuilderTests {
    @Test func baseURLPlusPathJoinsWithOneSlash() {
        #expect((Request.get |> baseURL("https://api.test/v1") |> path("users")).renderedURL == "https://api.test/v1/users")
        #expect((Request.get |> baseURL("https://api.test/v1/") |> path("users")).renderedURL == "https://api.test/v1/users")
        #expect((Request.get |> baseURL("https://api.test") |> path("users")).renderedURL == "https://api.test/users")
    }

    @Test func baseURLWithoutPathRendersAsGiven() {
        #expect((Request.get |> baseURL("https://api.test/v1/")).renderedURL == "https://api.test/v1/")
    }

    @Test func baseURLAcceptsFoundationURL() throws {
        let base = try #require(URL(string: "http://127.0.0.1:8080/root"))
        #expect((Request.get |> baseURL(base) |> path("x")).renderedURL == "http://127.0.0.1:8080/root/x")
    }

    @Test func pathTakesOneSegmentPerArgument() {
        let request = Request.get |> baseURL(api) |> path("users", 42, "posts")
        #expect(request.pathSegments == ["users", "42", "posts"])
        #expect(request.renderedURL == "https://api.example.com/v1/users/42/posts")
    }

    @Test func pathCallsAppend() {
        let request = Request.get |> baseURL(api) |> path("users") |> path(7)
        #expect(request.renderedURL == "https://api.example.com/v1/users/7")
    }

    @Test(arguments: [
        ("a/b", "a%2Fb"),
        ("a b", "a%20b"),
        ("a?b", "a%3Fb"),
        ("a#b", "a%23b"),
        ("100%", "100%25"),
        ("a;b", "a%3Bb"),
        ("café", "caf%C3%A9"),
        ("😀", "%F0%9F%98%80"),
        ("a+b=c&d", "a+b=c&d"),
        ("user@host:1", "user@host:1"),
        ("~._-", "~._-"),
        ("//evil.test/x", "%2F%2Fevil.test%2Fx"),
    ])
    func pathSegmentIsPercentEncoded(segment: String, encoded: String) {
        let request = Request.get |> baseURL("https://api.test") |> path(segment)
        #expect(request.renderedURL == "https://api.test/" + encoded)
    }

    @Test func pathSegmentCannotChangeTheHost() throws {
        let request = Request.get |> baseURL("https://api.test") |> path("//evil.test/x")
        #expect(try request.url().host == "api.test")
    }

    @Test func urlReplacesBaseURLPathAndQuery() {
        let request = Request.get |> baseURL(api) |> path("users") |> query("a", 1)
            |> url("https://other.test/x/y?keep=1")
        #expect(request.renderedURL == "https://other.test/x/y?keep=1")
        #expect((request |> query("b", 2)).renderedURL == "https://other.test/x/y?keep=1&b=2")
        #expect((request |> path("z")).renderedURL == "https://other.test/x/y/z?keep=1")
    }

    @Test func pathInsertsBeforeBaseQuery() {
        let request = Request.get |> baseURL("https://api.test/v1?key=abc") |> path("users") |> query("page", 2)
        #expect(request.renderedURL == "https://api.test/v1/users?key=abc&page=2")
    }

    @Test func invalidBaseURLStringIsRecorded() {
        let request = Request.get |> baseURL("http://[::1") |> path("x")
        #expect(request.problemKinds.contains(.invalidURL))
    }

    @Test func invalidURLStringIsRecorded() {
        let request = Request.get |> url("http://[bad")
        #expect(request.problemKinds.contains(.invalidURL))
        #expect(request.baseURL == nil)
    }

    @Test(arguments: ["ftp://files.test/x", "file:///etc/passwd", "mailto:a@b.c", "/relative/only"])
    func nonHTTPSchemesAreRejected(string: String) {
        let request = Request.get |> url(string)
        #expect(request.problemKinds.contains(.invalidURL))
    }

    @Test func missingURLIsAProblem() {
        #expect((Request.get |> path("users")).problemKinds == [.missingURL])
    }

    @Test func fragmentInBaseURLIsAProblem() {
        #expect((Request.get |> baseURL("https://api.test/v1#frag")).problemKinds == [.invalidURL])
    }

    @Test(arguments: ["", ".", ".."])
    func dotAndEmptySegmentsAreProblems(segment: String) {
        let request = Request.get |> baseURL(api) |> path("users", segment)
        #expect(request.problemKinds == [.invalidPathSegment])
        #expect(throws: CourierError.self) { try request.urlRequest() }
    }

    @Test func dotsInsideASegmentAreFine() {
        #expect((Request.get |> baseURL(api) |> path("...", ".x", "a..b")).problems.isEmpty)
    }
}
