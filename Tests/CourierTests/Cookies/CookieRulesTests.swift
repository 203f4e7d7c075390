import Courier
@testable import CourierCookies
@testable import CourierCore
import Foundation
import Testing

/// The jar's rules as RFC 6265bis and the Public Suffix List give them, each first on the path a
/// user takes (``CookieMiddleware`` around each hop of an exchange over the in-memory transport):
/// one tenant of a shared suffix cannot set cookies for the others, a sibling subdomain cannot
/// replace a host's own cookie, a transport that hands fields over apart never has them split,
/// and `http://localhost` keeps its `Secure` cookies.
@Suite("Cookies: the public suffix list, identity, commas and loopback")
struct CookieRulesTests {
    /// An executor over a site whose every path answers with `setCookie` (when given) and
    /// echoes the `Cookie` field it got.
    private static func site(_ setCookie: @escaping @Sendable (Request) -> String?) -> InMemoryExecutor {
        InMemoryExecutor { request in
            var headers: HTTPHeaders = [:]
            if let value = setCookie(request) { headers.add(.setCookie, value) }
            return .status(200, headers: headers, body: Data((request.headers[.cookie] ?? "none").utf8))
        }
    }

    private static func echoed(_ response: Response) -> String { String(decoding: response.body, as: UTF8.self) }

    // MARK: Public suffixes

    /// Shared-hosting suffixes from the list's private section and registry suffixes from its
    /// ICANN section, wildcard rules included: before the whole list was compiled in, the jar
    /// took `Domain=myshopify.com` from one shop and sent it to every other.
    @Test(arguments: [
        ("shop-a.myshopify.com", "myshopify.com", "shop-b.myshopify.com"),
        ("a.wixsite.com", "wixsite.com", "b.wixsite.com"),
        ("svc-a.run.app", "run.app", "svc-b.run.app"),
        ("f.cloudfunctions.net", "cloudfunctions.net", "g.cloudfunctions.net"),
        ("x.googleapis.com", "googleapis.com", "y.googleapis.com"),
        ("me.blogspot.co.uk", "blogspot.co.uk", "you.blogspot.co.uk"),
        ("b1.us-east-1.amazonaws.com", "us-east-1.amazonaws.com", "b2.us-east-1.amazonaws.com"),
        ("home.duckdns.org", "duckdns.org", "work.duckdns.org"),
        ("club.eu.org", "eu.org", "other.eu.org"),
        ("shop.tokyo.jp", "tokyo.jp", "bank.tokyo.jp"),
        ("www.ec2-1-2-3-4.compute.amazonaws.com", "ec2-1-2-3-4.compute.amazonaws.com", "api.ec2-1-2-3-4.compute.amazonaws.com"),
    ])
    func aTenantCannotSetACookieForEveryTenantOfItsSuffix(setter: String, suffix: String, victim: String) async throws {
        let store = CookieStore()
        let rejections = Box<[CookieRejection]>([])
        let middleware = CookieMiddleware(store) { rejection, _ in rejections.withLock { $0.append(rejection) } }
        let executor = Self.site { $0.url?.host == setter ? "sid=tenant-a; Domain=\(suffix); Path=/" : nil }.eachHop(middleware)
        _ = try await executor.send(.get |> url("https://\(setter)/"))
        let other = try await executor.send(.get |> url("https://\(victim)/"))
        #expect(Self.echoed(other) == "none")
        #expect(rejections.withLock { $0 } == [.publicSuffix])
    }

    /// Every rule of the compiled list, checked through the parser: a plain rule and a name one
    /// label under a wildcard rule are refused as a `Domain`, the name of an exception rule is not.
    @Test func everyRuleOfTheListIsRefusedByDefault() throws {
        let lines = PublicSuffixList.rules.split(separator: "\n")
        #expect(lines.count > 9_000)
        var checked = 0
        for line in lines {
            let rule = String(line)
            if rule.hasPrefix("!") {
                let domain = String(rule.dropFirst())
                let cookie = try Cookie(setCookie: "a=1; Domain=\(domain)", from: try #require(URL(string: "https://www.\(domain)/")), at: SetCookieTests.now)
                #expect(!cookie.hostOnly && cookie.domain == domain, "exception \(rule)")
            } else {
                let domain = rule.hasPrefix("*.") ? "name." + rule.dropFirst(2) : rule
                let url = try #require(URL(string: "https://site.\(domain)/"), "\(rule)")
                #expect(throws: CookieRejection.publicSuffix, "rule \(rule)") { try Cookie(setCookie: "a=1; Domain=\(domain)", from: url, at: SetCookieTests.now) }
            }
            checked += 1
        }
        #expect(checked == lines.count)
    }

    @Test func unicodeRulesAreMatchedAsPunycode() throws {
        // 公司.cn and 中国 (xn--55qx5d.cn, xn--fiqs8s): a Domain attribute must be ASCII.
        for suffix in ["xn--55qx5d.cn", "xn--fiqs8s"] {
            let url = try #require(URL(string: "https://shop.\(suffix)/"))
            #expect(throws: CookieRejection.publicSuffix) { try Cookie(setCookie: "a=1; Domain=\(suffix)", from: url, at: SetCookieTests.now) }
        }
        // A registrable name under one is a site of its own.
        let url = try #require(URL(string: "https://www.example.xn--fiqs8s/"))
        #expect(try Cookie(setCookie: "a=1; Domain=example.xn--fiqs8s", from: url, at: SetCookieTests.now).domain == "example.xn--fiqs8s")
    }

    @Test func wildcardsAndExceptionsFollowTheListsAlgorithm() throws {
        // *.ck and !www.ck: anything.ck is a suffix, www.ck is a site.
        #expect(CookieDomain.isPublicSuffix("anything.ck", extra: []))
        #expect(!CookieDomain.isPublicSuffix("www.ck", extra: []))
        #expect(CookieDomain.isPublicSuffix("ck", extra: []))
        // An unlisted top-level domain is a suffix by the implicit "*" rule; a name under it is not.
        #expect(CookieDomain.isPublicSuffix("zz-unlisted", extra: []))
        #expect(!CookieDomain.isPublicSuffix("example.zz-unlisted", extra: []))
        #expect(!CookieDomain.isPublicSuffix("example.com", extra: []))
        #expect(CookieDomain.isPublicSuffix("com.", extra: []))
    }

    @Test func theListIsNotSavedWithTheJar() throws {
        var jar = CookieJar()
        jar.store(setCookie: ["a=1; Domain=example.com"], from: try #require(URL(string: "https://www.example.com/")), at: SetCookieTests.now)
        let saved = try JSONEncoder().encode(jar)
        #expect(saved.count < 1_000, "a jar of one cookie saved as \(saved.count) bytes")
    }

    // MARK: Identity

    /// Session fixation from a sibling subdomain: `www.example.com` sets `sid` for the parent
    /// domain; `example.com`'s own host-only `sid` must stay, and both go to `example.com`
    /// (its own first, being older).
    @Test func aSiblingsDomainCookieDoesNotReplaceAHostsOwnCookie() async throws {
        let store = CookieStore()
        let executor = Self.site { request in
                switch request.url?.host {
                case "example.com": "sid=good; Path=/"
                case "www.example.com": "sid=evil; Domain=example.com; Path=/"
                default: nil
                }
            }
            .eachHop(CookieMiddleware(store))
        _ = try await executor.send(.get |> url("https://example.com/login"))
        _ = try await executor.send(.get |> url("https://www.example.com/"))
        #expect(store.jar.count == 2)
        var jar = store.jar
        #expect(jar.cookieHeader(for: try #require(URL(string: "https://example.com/")), at: store.now) == "sid=good; sid=evil")
        #expect(jar.cookieHeader(for: try #require(URL(string: "https://www.example.com/")), at: store.now) == "sid=evil")
        // The same host setting its own cookie again replaces only its own.
        jar.store(setCookie: ["sid=better; Path=/"], from: try #require(URL(string: "https://example.com/")), at: store.now)
        #expect(jar.cookieHeader(for: try #require(URL(string: "https://example.com/")), at: store.now) == "sid=better; sid=evil")
    }

    // MARK: Commas

    /// A transport that hands `Set-Cookie` fields over apart (the in-memory one, AsyncHTTPClient)
    /// must never have them split: a server that echoes input into a cookie value would let
    /// `, admin=1` inject a second cookie.
    @Test func aCommaInAFieldThatCameApartIsPartOfItsValue() async throws {
        let store = CookieStore()
        let executor = Self.site { _ in "name=ada, admin=1; Path=/" }.eachHop(CookieMiddleware(store))
        _ = try await executor.send(.get |> url("https://api.test/profile"))
        let cookies = store.jar.cookies
        #expect(cookies.map(\.name) == ["name"])
        #expect(cookies.first?.value == "ada, admin=1")
    }

    // MARK: Loopback

    /// RFC 6265bis counts loopback as a secure origin: a development server on
    /// `http://localhost` keeps the `Secure` cookies it sets, and gets them back.
    @Test(arguments: ["http://localhost:8080", "http://127.0.0.1:8080", "http://[::1]:8080", "http://app.localhost:3000"])
    func secureCookiesFromLoopbackAreKept(origin: String) async throws {
        let store = CookieStore()
        let rejections = Box<[CookieRejection]>([])
        let middleware = CookieMiddleware(store) { rejection, _ in rejections.withLock { $0.append(rejection) } }
        let executor = Self.site { $0.url?.path == "/login" ? "sid=1; Secure; HttpOnly; Path=/" : nil }.eachHop(middleware)
        _ = try await executor.send(.get |> url(origin + "/login"))
        let me = try await executor.send(.get |> url(origin + "/me"))
        #expect(Self.echoed(me) == "sid=1")
        #expect(rejections.withLock { $0 }.isEmpty)
    }

    @Test func aSecureCookieFromAPlainOriginIsRefusedAndTheCallerHears() async throws {
        let store = CookieStore()
        let heard = Box<[String]>([])
        let middleware = CookieMiddleware(store) { rejection, host in heard.withLock { $0.append("\(host): \(rejection)") } }
        let executor = Self.site { _ in "sid=SECRET-VALUE; Secure" }.eachHop(middleware)
        _ = try await executor.send(.get |> url("http://intranet.example/login"))
        #expect(store.jar.isEmpty)
        #expect(heard.withLock { $0 } == ["intranet.example: a Secure cookie was set over an insecure connection"])
    }

    @Test(arguments: ["::1", "0:0:0:0:0:0:0:1", "0::1", "::0:1"])
    func everySpellingOfTheIPv6LoopbackIsLoopback(host: String) {
        #expect(CookieTarget.isLoopback(host, isIP: true))
    }

    @Test(arguments: ["::2", "1::1", "::", "fe80::1", "::1:0", "not:an:address"])
    func otherIPv6AddressesAreNot(host: String) {
        #expect(!CookieTarget.isLoopback(host, isIP: true))
    }

    // MARK: The cap

    /// At the jar's limit the least recently used cookie goes, expired ones first; each store
    /// finds it from the front of the use order instead of looking at every cookie.
    @Test func atTheCapTheLeastRecentlyUsedGoesExpiredFirst() throws {
        let now = SetCookieTests.now
        var jar = CookieJar(policy: CookieJar.Policy(maximumCookiesPerDomain: 5, maximumCookies: 20))
        for site in 0..<20 {
            let url = try #require(URL(string: "https://site\(site).test/"))
            let lifetime = site == 7 ? "; Max-Age=10" : ""
            jar.store(setCookie: ["c=\(site)\(lifetime)"], from: url, at: now)
        }
        #expect(jar.count == 20)
        // Use site 0 again: site 1 becomes the least recently used.
        #expect(jar.cookieHeader(for: try #require(URL(string: "https://site0.test/")), at: now) == "c=0")
        jar.store(setCookie: ["c=new"], from: try #require(URL(string: "https://new.test/")), at: now)
        #expect(jar.cookies.map(\.domain).contains("site0.test"))
        #expect(!jar.cookies.map(\.domain).contains("site1.test"))
        // Later, site 7's cookie has expired: it goes before any live one.
        let later = now.addingTimeInterval(60)
        jar.store(setCookie: ["c=newer"], from: try #require(URL(string: "https://newer.test/")), at: later)
        #expect(!jar.cookies.map(\.domain).contains("site7.test"))
        #expect(jar.cookies.map(\.domain).contains("site2.test"))
        #expect(jar.count == 20)
        // Many stores at the cap: always 20, the newest kept.
        for round in 0..<500 {
            jar.store(setCookie: ["c=\(round)"], from: try #require(URL(string: "https://round\(round).test/")), at: later)
        }
        #expect(jar.count == 20)
        #expect(jar.cookies.map(\.domain).contains("round499.test"))
        #expect(!jar.cookies.map(\.domain).contains("round479.test"))
    }
}
