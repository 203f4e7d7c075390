import Courier
@testable import CourierCore
@testable import CourierURLSession
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Redirect policy")
struct RedirectPolicyTests {
    private func chain(_ method: String = "POST", url address: String = "https://api.test/start") throws -> RedirectPolicy.Chain {
        var request = Request(method: HTTPMethod(rawValue: method)) |> url(address)
            |> header("Authorization", "Bearer secret") |> header("Cookie", "a=b") |> header("X-Custom-Key", "k")
            |> header("X-Trace", "kept")
        // A body only where the method may carry one: the chain starts from a request that can be sent.
        if method != "GET" && method != "HEAD" { request = request |> body(Data("body".utf8)) |> header("Content-Type", "application/json") }
        request.redaction = Redaction(headers: ["X-Custom-Key"])
        return RedirectPolicy.Chain(request)
    }

    private func follow(_ step: RedirectPolicy.Step) -> Request? {
        if case .follow(let next) = step { return next }
        return nil
    }

    @Test(arguments: [(301, "POST", "GET"), (302, "POST", "GET"), (303, "POST", "GET"), (303, "PUT", "GET"),
        (303, "DELETE", "GET"), (301, "PUT", "PUT"), (302, "PATCH", "PATCH"), (307, "POST", "POST"), (308, "POST", "POST"),
        (303, "HEAD", "HEAD")])
    func methodRewriting(status: Int, method: String, expected: String) throws {
        var chain = try chain(method)
        let next = try #require(follow(RedirectPolicy.follow.next(status: status, location: "https://api.test/next", chain: &chain)))
        #expect(next.method.rawValue == expected)
        if expected == "GET" || expected == "HEAD" {
            #expect(next.body == nil)
            #expect(next.headers["Content-Type"] == nil)
        } else {
            #expect(next.body == Data("body".utf8))
            #expect(next.headers["Content-Type"] == "application/json")
        }
        // Same origin: credentials stay.
        #expect(next.headers["Authorization"] == "Bearer secret")
    }

    @Test(arguments: ["https://other.test/x", "http://api.test/start", "https://api.test:8443/x", "https://API.test.evil/x"])
    func leavingTheOriginDropsCredentials(target: String) throws {
        var chain = try chain("GET")
        let next = try #require(follow(RedirectPolicy.follow.next(status: 302, location: target, chain: &chain)))
        #expect(next.headers["Authorization"] == nil)
        #expect(next.headers["Cookie"] == nil)
        #expect(next.headers["X-Custom-Key"] == nil)
        #expect(next.headers["X-Trace"] == "kept")
    }

    /// A body re-sent over `http` after an `https` hop would cross the network in clear text.
    @Test(arguments: [307, 308])
    func aDowngradeThatWouldResendTheBodyIsRefused(status: Int) throws {
        var chain = try chain("POST")
        let step = RedirectPolicy.follow.next(status: status, location: "http://api.test/next", chain: &chain)
        guard case .fail(let failure) = step else {
            Issue.record("followed: \(step)")
            return
        }
        #expect(failure.kind == .redirectFailed)
        #expect(failure.message.contains("clear text"))
        #expect(chain.hops == 0)
    }

    /// Without a body (a GET, or a POST a 301/302/303 turns into one) the downgrade is followed,
    /// credentials dropped; a policy can refuse every downgrade.
    @Test(arguments: [(302, "POST"), (303, "PUT"), (307, "GET"), (308, "HEAD")])
    func aDowngradeWithoutABodyIsFollowedUnlessThePolicyRefusesIt(status: Int, method: String) throws {
        var chain = try chain(method)
        let next = try #require(follow(RedirectPolicy.follow.next(status: status, location: "http://api.test/next", chain: &chain)))
        #expect(next.body == nil)
        #expect(next.headers["Authorization"] == nil)
        #expect(next.url?.scheme == "http")
        var strict = RedirectPolicy.follow
        strict.followsDowngrades = false
        var again = try self.chain(method)
        guard case .fail(let failure) = strict.next(status: status, location: "http://api.test/next", chain: &again) else {
            Issue.record("a strict policy followed a downgrade")
            return
        }
        #expect(failure.kind == .redirectFailed)
    }

    /// What counts is the hop being left: `http` → `https` → `http` is a downgrade at its second redirect,
    /// and a redirect that stays on `http` is not one.
    @Test func theDowngradeIsJudgedAgainstTheCurrentHop() throws {
        var plain = try chain("POST", url: "http://api.test/start")
        #expect(follow(RedirectPolicy.follow.next(status: 307, location: "http://other.test/x", chain: &plain)) != nil)
        var upAndDown = try chain("POST", url: "http://api.test/start")
        #expect(follow(RedirectPolicy.follow.next(status: 307, location: "https://api.test/secure", chain: &upAndDown)) != nil)
        guard case .fail = RedirectPolicy.follow.next(status: 307, location: "http://api.test/plain", chain: &upAndDown) else {
            Issue.record("the second hop's downgrade was followed")
            return
        }
    }

    @Test func credentialsStayDroppedWhenComingBack() throws {
        var chain = try chain("GET")
        _ = RedirectPolicy.follow.next(status: 302, location: "https://other.test/x", chain: &chain)
        let back = try #require(follow(RedirectPolicy.follow.next(status: 302, location: "https://api.test/y", chain: &chain)))
        #expect(back.headers["Authorization"] == nil)
    }

    @Test func hostCaseAndDefaultPortAreTheSameOrigin() throws {
        var chain = try chain("GET")
        let next = try #require(follow(RedirectPolicy.follow.next(status: 302, location: "https://API.TEST:443/y", chain: &chain)))
        #expect(next.headers["Authorization"] == "Bearer secret")
    }

    @Test func extraSensitiveHeadersAreDropped() throws {
        var chain = try chain("GET")
        let policy = RedirectPolicy(sensitiveHeaders: ["x-trace"])
        let next = try #require(follow(policy.next(status: 302, location: "https://other.test/", chain: &chain)))
        #expect(next.headers["X-Trace"] == nil)
    }

    private func failure(_ step: RedirectPolicy.Step) -> TransportFailure? {
        if case .fail(let failure) = step { return failure }
        return nil
    }

    @Test func hopLimit() throws {
        var chain = try chain("GET")
        let policy = RedirectPolicy(maximumHops: 2)
        #expect(follow(policy.next(status: 302, location: "https://api.test/1", chain: &chain)) != nil)
        #expect(follow(policy.next(status: 302, location: "https://api.test/2", chain: &chain)) != nil)
        let refused = try #require(failure(policy.next(status: 302, location: "https://api.test/3", chain: &chain)))
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
        let refused = try #require(failure(RedirectPolicy.follow.next(status: 302, location: location, chain: &chain)))
        #expect(refused.kind == .redirectFailed)
        #expect(!refused.message.contains("passwd"))
    }

    /// Only spaces and tabs around the field value are dropped: a no-break or ideographic space
    /// is part of the reference, as a browser's URL parser reads it, so `\u{A0}//evil.test/` is a
    /// path on the same host, not another host.
    @Test(arguments: ["\u{A0}//evil.test/", "\u{3000}//evil.test/x", " \t\u{A0}//evil.test"])
    func aNonASCIISpaceIsPartOfTheLocation(location: String) throws {
        var chain = try chain("GET")
        if let next = follow(RedirectPolicy.follow.next(status: 302, location: location, chain: &chain)) {
            #expect(URL(string: next.renderedURL)?.host == "api.test", "\(next.renderedURL)")
        }
    }

    @Test(arguments: [
        ("/next", "https://api.test/next"), ("next", "https://api.test/next"), ("?page=2", "https://api.test/start?page=2"),
        ("//api.test/x", "https://api.test/x"), ("HTTPS://api.test/y", "https://api.test/y"),
    ])
    func relativeAndHTTPLocationsAreFollowed(location: String, expected: String) throws {
        var chain = try chain("GET")
        let next = try #require(follow(RedirectPolicy.follow.next(status: 302, location: location, chain: &chain)))
        #expect(next.renderedURL.lowercased() == expected.lowercased())
    }

    /// Scheme and host are case-insensitive (RFC 3986 §6.2.2.1): the next hop carries them in
    /// lowercase whatever case the server wrote, so every later comparison sees one spelling.
    /// Found by the Location fuzz target (`httPs://…` came back as `httPs`).
    @Test(arguments: [
        ("HTTPS://API.Test/Y?Q=A", "https://api.test/Y?Q=A"), ("httPs://api.test/x", "https://api.test/x"),
        ("https://Other.TEST:8443/Path", "https://other.test:8443/Path"), ("//API.test/z", "https://api.test/z"),
    ])
    func theNextHopsSchemeAndHostAreLowercase(location: String, expected: String) throws {
        var chain = try chain("GET")
        let next = try #require(follow(RedirectPolicy.follow.next(status: 302, location: location, chain: &chain)))
        #expect(next.renderedURL == expected)
    }

    /// Found by the Location fuzz target: a host of 2,076 characters was followed with its
    /// server's case (Foundation's URLComponents gives no host that long, so it was not
    /// lowercased). No DNS name is over 253 characters: such a target is refused with a reason.
    @Test(arguments: ["//" + String(repeating: "H", count: 300) + ".test/", "https://" + String(repeating: "a", count: 254) + "/x"])
    func aTargetWithAHostLongerThanADNSNameIsRefused(location: String) throws {
        var chain = try chain("GET")
        let step = RedirectPolicy.follow.next(status: 302, location: location, chain: &chain)
        guard case .fail(let failure) = step else {
            Issue.record("followed or delivered: \(step)")
            return
        }
        #expect(failure.message.contains("253"))
    }

    @Test func aTargetWithAHostOfExactly253CharactersIsFollowed() throws {
        var chain = try chain("GET")
        let host = String(repeating: "a.", count: 126) + "B"
        let next = try #require(follow(RedirectPolicy.follow.next(status: 302, location: "https://\(host)/x", chain: &chain)))
        #expect(next.renderedURL == "https://\(host.lowercased())/x")
    }

    /// A server must not choose the Basic credentials of the next hop.
    @Test(arguments: ["http://evil:PW@other.test/", "https://user@api.test/x", "//u:p@other.test/"])
    func userinfoInTheTargetIsDropped(location: String) throws {
        var chain = try chain("GET")
        let next = try #require(follow(RedirectPolicy.follow.next(status: 302, location: location, chain: &chain)))
        let url = try next.validatedURL()
        #expect(url.user == nil)
        #expect(url.password == nil)
        #expect(!url.absoluteString.contains("@"))
    }

    @Test func refuseDeliversTheRedirect() throws {
        var chain = try chain("GET")
        #expect(RedirectPolicy.refuse.next(status: 302, location: "https://api.test/x", chain: &chain) == .deliver)
    }

    @Test func aOneShotSequenceBodyCannotBeReplayed() throws {
        let chunks = AsyncStream<Data> { $0.finish() }
        var chain = RedirectPolicy.Chain(Request.post |> url("https://api.test/upload") |> upload(chunks))
        let refused = try #require(failure(RedirectPolicy.follow.next(status: 307, location: "/again", chain: &chain)))
        #expect(refused.kind == .redirectFailed)
        #expect(refused.message.contains("one-shot"))
        var seeOther = RedirectPolicy.Chain(Request.post |> url("https://api.test/upload") |> upload(chunks))
        let get = try #require(follow(RedirectPolicy.follow.next(status: 303, location: "/done", chain: &seeOther)))
        #expect(get.method == .get)
        #expect(get.bodySource == nil)
    }

    @Test func theTargetIsSentExactlyAsTheServerWroteIt() throws {
        var chain = try chain("GET")
        let next = try #require(follow(RedirectPolicy.follow.next(status: 302, location: "/a%2Fb/c?x=1%202&y=%26", chain: &chain)))
        #expect(next.renderedURL == "https://api.test/a%2Fb/c?x=1%202&y=%26")
        #expect(chain.current == next)
        #expect(chain.hops == 1)
        #expect(!chain.leftOrigin)
    }

    @Test func aResponseThatIsNotARedirectIsDelivered() throws {
        var chain = try chain("GET")
        let response = Response(status: 200, headers: ["Location": "https://api.test/elsewhere"])
        #expect(RedirectPolicy.follow.next(after: response, chain: &chain) == .deliver)
        #expect(chain.hops == 0)
    }

    /// The framing check any transport calls, on Courier's own values.
    @Test func theFramingCheckIsTheSameForEveryTransport() {
        let short = Response(status: 200, headers: ["Content-Length": "10"], body: Data("12345".utf8))
        #expect(short.framingFailure(method: .get)?.kind == .truncatedBody)
        #expect(short.framingFailure(method: .get, bodyCount: 10) == nil)
        #expect(short.framingFailure(method: .head) == nil)
        let long = Response(status: 200, headers: ["Content-Length": "2"], body: Data("12345".utf8))
        #expect(long.framingFailure(method: .get)?.kind == .truncatedBody)
        let compressed = Response(status: 200, headers: ["Content-Length": "10", "Content-Encoding": "gzip"], body: Data("12345".utf8))
        #expect(compressed.framingFailure(method: .get) == nil)
        for status in [204, 304, 302] {
            #expect(Response(status: status, headers: ["Content-Length": "10"]).framingFailure(method: .get) == nil)
        }
    }
}
