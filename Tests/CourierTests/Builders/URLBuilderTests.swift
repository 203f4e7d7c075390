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
        #expect(try request.validatedURL().host == "api.test")
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

    /// Strings that Foundation and a WHATWG parser (browsers, proxies) would send to different
    /// hosts, or that carry bytes no host may have, are refused by `url` and `baseURL` alike.
    @Test(arguments: [
        "http://127.0.0.1:8001\\@localhost:8002/x", "http://localhost\\evil.test/", "http://api.test/a\\b",
        "http://api test/", "http://api.test/ x", " http://api.test/", "http://api.test/\t", "http://api.test/\u{0}",
        "http://api.test/\r\nX: y", "http://h%00x.test/", "http://api%2Etest/", "http://a@b@api.test/",
        "http://u:p%00@api.test/", "http://api.test:99999/", "http://api.test:8o/", "http://[::1/", "http://[::1]x/",
        "http://[fe80::1%25eth0]/", "http://ex ämple.com/", "http://<api>/",
        "http://api.test^/", "http://api|test/",
    ])
    func ambiguousURLsAreRefused(string: String) {
        for built in [Request.get |> url(string), Request.get |> baseURL(string)] {
            #expect(built.problemKinds.contains(.invalidURL), "\(string.debugDescription) was accepted")
            #expect(throws: CourierError.self) { try built.urlRequest() }
        }
    }

    /// An internationalized host is not ambiguous once in its ASCII form, which Foundation on
    /// Apple platforms and WHATWG parsers both give it (the ideographic full stop is a dot to
    /// both): `url` and `baseURL` take that form.
    @Test(arguments: [
        ("http://éxample.com/", "http://xn--xample-9ua.com/"), ("http://api.test\u{3002}evil/", "http://api.test.evil/"),
    ])
    func internationalHostsAreTakenInTheirASCIIForm(string: String, sent: String) throws {
        for built in [Request.get |> url(string), Request.get |> baseURL(string)] {
            #expect(built.problems.isEmpty)
            #expect(try built.validatedURL().absoluteString == sent)
        }
    }

    @Test(arguments: [
        "http://127.0.0.1:8080/x", "http://[::1]:9000/", "https://user:pa%40ss@api.test/", "https://xn--xample-9ua.com/",
        "https://api.test/path?q=a@b&r=c:d", "https://api.test", "https://api_test.local:0/", "https://API.Test/x",
    ])
    func ordinaryURLsStillWork(string: String) {
        #expect((Request.get |> url(string)).problems.isEmpty, "\(string) was refused")
    }

    /// A `URL` value built elsewhere is checked too, after Foundation decoded its host.
    @Test func foundationURLWithAControlCharacterInTheHostIsRefused() throws {
        let parsed = try #require(URL(string: "http://h%00x/"))
        #expect((Request.get |> baseURL(parsed)).problemKinds.contains(.invalidURL))
    }

    @Test func refusalMessagesSayWhy() {
        let message = (Request.get |> url("http://127.0.0.1:8001\\@localhost:8002/x")).problems.first?.message ?? ""
        #expect(message.contains("backslash"))
    }
}
