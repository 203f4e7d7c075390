@testable import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Redirect policy")
struct RedirectPolicyTests {
    private func chain(_ method: String = "POST", url: String = "https://api.test/start") throws -> RedirectPolicy.Chain {
        var request = URLRequest(url: try #require(URL(string: url)))
        request.httpMethod = method
        request.httpBody = Data("body".utf8)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("Bearer secret", forHTTPHeaderField: "Authorization")
        request.setValue("a=b", forHTTPHeaderField: "Cookie")
        request.setValue("k", forHTTPHeaderField: "X-Custom-Key")
        request.setValue("kept", forHTTPHeaderField: "X-Trace")
        return RedirectPolicy.Chain(
            origin: Origin(try #require(URL(string: url))), current: request,
            redaction: Redaction(headers: ["X-Custom-Key"]))
    }

    private func follow(_ decision: RedirectPolicy.Decision) -> URLRequest? {
        if case .follow(let next) = decision { return next }
        return nil
    }

    @Test(arguments: [(301, "POST", "GET"), (302, "POST", "GET"), (303, "POST", "GET"), (303, "PUT", "GET"),
        (303, "DELETE", "GET"), (301, "PUT", "PUT"), (302, "PATCH", "PATCH"), (307, "POST", "POST"), (308, "POST", "POST"),
        (303, "HEAD", "HEAD")])
    func methodRewriting(status: Int, method: String, expected: String) throws {
        var chain = try chain(method)
        let next = try #require(follow(RedirectPolicy.follow.decide(status: status, location: "https://api.test/next", chain: &chain)))
        #expect(next.httpMethod == expected)
        if expected == "GET" && method != "GET" {
            #expect(next.httpBody == nil)
            #expect(next.value(forHTTPHeaderField: "Content-Type") == nil)
        } else {
            #expect(next.httpBody == Data("body".utf8))
            #expect(next.value(forHTTPHeaderField: "Content-Type") == "application/json")
        }
        // Same origin: credentials stay.
        #expect(next.value(forHTTPHeaderField: "Authorization") == "Bearer secret")
    }

    @Test(arguments: ["https://other.test/x", "http://api.test/start", "https://api.test:8443/x", "https://API.test.evil/x"])
    func leavingTheOriginDropsCredentials(target: String) throws {
        var chain = try chain("GET")
        let next = try #require(follow(RedirectPolicy.follow.decide(status: 302, location: target, chain: &chain)))
        #expect(next.value(forHTTPHeaderField: "Authorization") == nil)
        #expect(next.value(forHTTPHeaderField: "Cookie") == nil)
        #expect(next.value(forHTTPHeaderField: "X-Custom-Key") == nil)
        #expect(next.value(forHTTPHeaderField: "X-Trace") == "kept")
    }

    @Test func credentialsStayDroppedWhenComingBack() throws {
        var chain = try chain("GET")
        _ = RedirectPolicy.follow.decide(status: 302, location: "https://other.test/x", chain: &chain)
        let back = try #require(follow(RedirectPolicy.follow.decide(status: 302, location: "https://api.test/y", chain: &chain)))
        #expect(back.value(forHTTPHeaderField: "Authorization") == nil)
    }

    @Test func hostCaseAndDefaultPortAreTheSameOrigin() throws {
        var chain = try chain("GET")
        let next = try #require(follow(RedirectPolicy.follow.decide(status: 302, location: "https://API.TEST:443/y", chain: &chain)))
        #expect(next.value(forHTTPHeaderField: "Authorization") == "Bearer secret")
    }

    @Test func extraSensitiveHeadersAreDropped() throws {
        var chain = try chain("GET")
        let policy = RedirectPolicy(sensitiveHeaders: ["x-trace"])
        let next = try #require(follow(policy.decide(status: 302, location: "https://other.test/", chain: &chain)))
        #expect(next.value(forHTTPHeaderField: "X-Trace") == nil)
    }

    private func failure(_ decision: RedirectPolicy.Decision) -> TransportFailure? {
        if case .fail(let failure) = decision { return failure }
        return nil
    }

    @Test func hopLimit() throws {
        var chain = try chain("GET")
        let policy = RedirectPolicy(maximumHops: 2)
        #expect(follow(policy.decide(status: 302, location: "https://api.test/1", chain: &chain)) != nil)
        #expect(follow(policy.decide(status: 302, location: "https://api.test/2", chain: &chain)) != nil)
        let refused = try #require(failure(policy.decide(status: 302, location: "https://api.test/3", chain: &chain)))
        #expect(refused.kind == .redirectFailed)
        #expect(refused.code == URLError.httpTooManyRedirects.rawValue)
    }

    /// The raw Location decides: FoundationNetworking turns `file:///etc/passwd` into
    /// `http://same-origin/etc/passwd` before a delegate sees it.
    @Test(arguments: [
        "ftp://files.test/x", "file:///etc/passwd", "file:/etc/passwd", "FILE:///x", "javascript:alert(1)",
        "data:text/html,<b>hi</b>", "mailto:someone@api.test", "gopher://api.test/", "http:no-authority",
        "https://127.0.0.1:1\\@localhost:2/x", "https://api.test/a b", "https://h%00x.test/", "//evil.test\\@api.test/",
        "https://a@b@api.test/", "https://api.test:99999/", "",
    ])
    func unsafeLocationsAreRefused(location: String) throws {
        var chain = try chain("GET")
        let refused = try #require(failure(RedirectPolicy.follow.decide(status: 302, location: location, chain: &chain)))
        #expect(refused.kind == .redirectFailed)
        #expect(!refused.message.contains("passwd"))
    }

    @Test(arguments: [
        ("/next", "https://api.test/next"), ("next", "https://api.test/next"), ("?page=2", "https://api.test/start?page=2"),
        ("//api.test/x", "https://api.test/x"), ("HTTPS://api.test/y", "https://api.test/y"),
    ])
    func relativeAndHTTPLocationsAreFollowed(location: String, expected: String) throws {
        var chain = try chain("GET")
        let next = try #require(follow(RedirectPolicy.follow.decide(status: 302, location: location, chain: &chain)))
        #expect(next.url?.absoluteString.lowercased() == expected.lowercased())
    }

    /// A server must not choose the Basic credentials of the next hop.
    @Test(arguments: ["http://evil:PW@other.test/", "https://user@api.test/x", "//u:p@other.test/"])
    func userinfoInTheTargetIsDropped(location: String) throws {
        var chain = try chain("GET")
        let next = try #require(follow(RedirectPolicy.follow.decide(status: 302, location: location, chain: &chain)))
        let url = try #require(next.url)
        #expect(url.user == nil)
        #expect(url.password == nil)
        #expect(!url.absoluteString.contains("@"))
    }

    @Test func refuseDeliversTheRedirect() throws {
        var chain = try chain("GET")
        #expect(RedirectPolicy.refuse.decide(status: 302, location: "https://api.test/x", chain: &chain) == .deliver)
    }
}
