import Courier
import Foundation
import Testing

/// The jar as a value: what goes back to which URL, replacement, deletion, limits, persistence,
/// and that no printed form shows a value.
@Suite("Cookies: the jar")
struct CookieJarTests {
    static let now = SetCookieTests.now
    static let site = URL(string: "https://www.example.com/shop/cart")!

    private func filled(_ fields: [String], from url: URL = site, policy: CookieJar.Policy = .init()) -> CookieJar {
        var jar = CookieJar(policy: policy)
        let rejections = jar.store(setCookie: fields, from: url, at: Self.now)
        #expect(rejections.isEmpty, "\(rejections)")
        return jar
    }

    private func header(_ jar: CookieJar, _ url: String, at time: Date = now) -> String? {
        var jar = jar
        return jar.cookieHeader(for: URL(string: url)!, at: time)
    }

    @Test func aHostOnlyCookieGoesToItsHostAloneAndADomainCookieToSubdomainsToo() {
        let jar = filled(["host=1; Path=/", "wide=2; Domain=example.com; Path=/"])
        #expect(header(jar, "https://www.example.com/") == "host=1; wide=2")
        #expect(header(jar, "https://api.www.example.com/") == "wide=2")
        #expect(header(jar, "https://example.com/") == "wide=2")
        #expect(header(jar, "https://badexample.com/") == nil)
        #expect(header(jar, "https://example.com.evil.test/") == nil)
    }

    @Test func aCookieGoesToItsPathAndBelowNotToASiblingThatSharesAPrefix() {
        let jar = filled(["a=1; Path=/shop"])
        #expect(header(jar, "https://www.example.com/shop") == "a=1")
        #expect(header(jar, "https://www.example.com/shop/item?x=1") == "a=1")
        #expect(header(jar, "https://www.example.com/shopping") == nil)
        #expect(header(jar, "https://www.example.com/") == nil)
    }

    @Test func aSecureCookieNeverGoesOverHTTP() {
        let jar = filled(["s=1; Secure; Path=/"])
        #expect(header(jar, "https://www.example.com/") == "s=1")
        #expect(header(jar, "http://www.example.com/") == nil)
    }

    @Test func longerPathsComeFirstThenOlderCookies() {
        var jar = CookieJar()
        jar.store(setCookie: ["b=1; Path=/"], from: Self.site, at: Self.now)
        jar.store(setCookie: ["a=2; Path=/"], from: Self.site, at: Self.now.addingTimeInterval(1))
        jar.store(setCookie: ["c=3; Path=/shop"], from: Self.site, at: Self.now.addingTimeInterval(2))
        #expect(header(jar, "https://www.example.com/shop/x", at: Self.now.addingTimeInterval(3)) == "c=3; b=1; a=2")
    }

    /// The jar keeps each domain's cookies in sending order as they come and go; whatever the
    /// history (stores, replacements, deletions, expiries, cookies from the host and from its
    /// parent domains), what goes out is what sorting the matching cookies by RFC 6265's rule
    /// gives, and a jar loaded from the same cookies is equal and sends the same field.
    @Test(arguments: 1...12) func theOrderSentIsTheRulesWhateverTheHistory(seed: UInt64) throws {
        var state = seed &* 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        let hosts = ["https://a.b.example.com", "https://b.example.com", "https://example.com"]
        let paths = ["/", "/x", "/x/y", "/xy", "/x/y/z"]
        var jar = CookieJar(policy: .init(maximumCookiesPerDomain: 12, maximumCookies: 30))
        var time = Self.now
        for _ in 0..<200 {
            time += Double(next(3))  // Often the same instant: ties must still be ordered.
            let host = hosts[next(hosts.count)]
            let url = try #require(URL(string: host + paths[next(paths.count)] + "/page"))
            var field = "n\(next(6))=v\(next(1000)); Path=\(paths[next(paths.count)])"
            if next(3) == 0 { field += "; Domain=example.com" }
            switch next(8) {
            case 0: field += "; Max-Age=0"
            case 1: field += "; Max-Age=\(1 + next(4))"
            default: break
            }
            jar.store(setCookie: [field], from: url, at: time)
            if next(4) == 0 {
                let read = try #require(URL(string: hosts[next(hosts.count)] + paths[next(paths.count)]))
                let live = jar.cookies.filter { !$0.isExpired(at: time) && $0.matches(read) }
                let expected = live.sorted { a, b in
                    if a.path.utf8.count != b.path.utf8.count { return a.path.utf8.count > b.path.utf8.count }
                    if a.created != b.created { return a.created < b.created }
                    if a.domain.utf8.count != b.domain.utf8.count { return a.domain.utf8.count > b.domain.utf8.count }
                    if a.hostOnly != b.hostOnly { return a.hostOnly }
                    return (a.name, a.path, a.domain) < (b.name, b.path, b.domain)
                }
                var copy = jar
                let sent = copy.cookies(for: read, at: time)
                func identities(_ cookies: [Cookie]) -> [String] { cookies.map { "\($0.name) \($0.domain) \($0.hostOnly) \($0.path)" } }
                #expect(identities(sent) == identities(expected))
                let field = jar.cookieHeader(for: read, at: time)
                #expect(field == (expected.isEmpty ? nil : expected.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")))
            }
        }
        let loaded = CookieJar(policy: jar.policy, cookies: jar.cookies.reversed())
        #expect(loaded == jar)
        var a = jar, b = loaded
        for host in hosts {
            let url = try #require(URL(string: host + "/x/y/z"))
            #expect(a.cookieHeader(for: url, at: time) == b.cookieHeader(for: url, at: time))
        }
    }

    /// An insecure origin may not replace or shadow a `Secure` cookie, whatever the jar's history:
    /// the jar looks only at the domains that hold a `Secure` cookie of the name, and the answer
    /// is the rule's, checked against every cookie the jar holds.
    @Test(arguments: 1...8) func anInsecureOriginIsRefusedExactlyWhenItWouldShadowASecureCookie(seed: UInt64) throws {
        var state = seed &* 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        let hosts = ["a.b.example.com", "b.example.com", "example.com", "other.test"]
        let paths = ["/", "/x", "/x/y", "/xy"]
        var jar = CookieJar(policy: .init(maximumCookiesPerDomain: 6, maximumCookies: 15))
        var time = Self.now
        var refusals = 0
        for _ in 0..<300 {
            time += Double(next(2))
            let secureOrigin = next(2) == 0
            let url = try #require(URL(string: (secureOrigin ? "https://" : "http://") + hosts[next(hosts.count)] + paths[next(paths.count)] + "/p"))
            var field = "n\(next(4))=v; Path=\(paths[next(paths.count)])"
            if next(3) == 0 { field += "; Domain=example.com" }
            if secureOrigin && next(2) == 0 { field += "; Secure" }
            if next(10) == 0 { field += "; Max-Age=0" }
            guard let cookie = try? Cookie(setCookie: field, from: url, at: time) else { continue }
            func domainMatches(_ host: String, _ domain: String) -> Bool { host == domain || host.hasSuffix("." + domain) }
            func pathCovers(_ request: String, _ path: String) -> Bool {
                request == path || (request.hasPrefix(path) && (path.hasSuffix("/") || request.dropFirst(path.count).first == "/"))
            }
            let shadows = !secureOrigin && !cookie.secure && jar.cookies.contains { held in
                held.secure && held.name == cookie.name
                    && (domainMatches(held.domain, cookie.domain) || domainMatches(cookie.domain, held.domain)) && pathCovers(cookie.path, held.path)
            }
            let rejections = jar.store(setCookie: [field], from: url, at: time)
            #expect(rejections.contains(.wouldOverwriteSecureCookie) == shadows, "\(field) from \(url)")
            if shadows { refusals += 1 }
            if next(5) == 0 { jar.removeExpired(at: time + 2) }
        }
        #expect(refusals > 0, "the history never met the rule")
    }

    @Test func aNewCookieReplacesTheOneWithItsNameDomainAndPathAndKeepsItsCreationTime() {
        var jar = filled(["a=1; Path=/"])
        jar.store(setCookie: ["a=2; Path=/"], from: Self.site, at: Self.now.addingTimeInterval(60))
        #expect(jar.count == 1)
        let cookie = jar.cookies[0]
        #expect(cookie.value == "2" && cookie.created == Self.now && cookie.lastAccess == Self.now.addingTimeInterval(60))
        jar.store(setCookie: ["a=3; Path=/other"], from: Self.site, at: Self.now)
        #expect(jar.count == 2)
    }

    @Test func anExpiredCookieDeletesTheOneItNames() {
        var jar = filled(["a=1; Path=/", "b=2; Path=/"])
        jar.store(setCookie: ["a=; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT", "b=x; Path=/; Max-Age=0"], from: Self.site, at: Self.now)
        #expect(jar.isEmpty)
    }

    @Test func aCookiePastItsExpiryIsNotSentAndIsRemoved() {
        var jar = filled(["a=1; Path=/; Max-Age=60"])
        #expect(header(jar, "https://www.example.com/", at: Self.now.addingTimeInterval(59)) == "a=1")
        #expect(jar.cookieHeader(for: URL(string: "https://www.example.com/")!, at: Self.now.addingTimeInterval(60)) == nil)
        #expect(jar.isEmpty)
    }

    @Test func anInsecureOriginCannotReplaceOrShadowASecureCookie() {
        var jar = filled(["id=secret; Secure; Path=/"])
        let http = URL(string: "http://www.example.com/shop/")!
        #expect(jar.store(setCookie: ["id=forged; Path=/"], from: http, at: Self.now) == [.wouldOverwriteSecureCookie])
        #expect(jar.store(setCookie: ["id=forged; Path=/shop"], from: http, at: Self.now) == [.wouldOverwriteSecureCookie])
        #expect(jar.store(setCookie: ["id=forged; Domain=example.com; Path=/"], from: http, at: Self.now) == [.wouldOverwriteSecureCookie])
        #expect(jar.store(setCookie: ["other=1; Path=/"], from: http, at: Self.now).isEmpty)
        #expect(header(jar, "https://www.example.com/") == "id=secret; other=1")
    }

    @Test func aDomainKeepsAtMostItsLimitTheLeastRecentlyUsedGoingFirst() {
        var jar = CookieJar(policy: .init(maximumCookiesPerDomain: 3))
        jar.store(setCookie: ["c0=0; Path=/shop", "c1=1; Path=/account", "c2=2; Path=/account"], from: Self.site, at: Self.now)
        // c0 is sent and c1 stored again, so c2 is now the least recently used.
        _ = jar.cookies(for: Self.site, at: Self.now.addingTimeInterval(1))
        jar.store(setCookie: ["c1=again; Path=/account"], from: Self.site, at: Self.now.addingTimeInterval(2))
        jar.store(setCookie: ["c3=3; Path=/"], from: Self.site, at: Self.now.addingTimeInterval(3))
        #expect(Set(jar.cookies.map(\.name)) == ["c0", "c1", "c3"])
        jar.store(setCookie: (10..<1000).map { "f\($0)=1; Path=/" }, from: Self.site, at: Self.now.addingTimeInterval(4))
        #expect(Set(jar.cookies.map(\.name)) == ["f997", "f998", "f999"])
        #expect(jar.count == 3)
    }

    @Test func theJarKeepsAtMostItsTotalExpiredCookiesGoingFirst() {
        var jar = CookieJar(policy: .init(maximumCookies: 2))
        jar.store(setCookie: ["short=1; Max-Age=10"], from: URL(string: "https://a.test/")!, at: Self.now)
        jar.store(setCookie: ["old=1"], from: URL(string: "https://b.test/")!, at: Self.now.addingTimeInterval(1))
        jar.store(setCookie: ["new=1"], from: URL(string: "https://c.test/")!, at: Self.now.addingTimeInterval(20))
        #expect(Set(jar.cookies.map(\.name)) == ["old", "new"])
        jar.store(setCookie: ["newer=1"], from: URL(string: "https://d.test/")!, at: Self.now.addingTimeInterval(21))
        #expect(Set(jar.cookies.map(\.name)) == ["new", "newer"])
    }

    /// Cookies sent together are used at one instant (the jar records that once per domain, not
    /// once per cookie): at the jar's limit the least recently used still goes first, a cookie
    /// of another site before them, then the older created of the two sent together.
    @Test func cookiesUsedTogetherAreEvictedInTheOrderOfTheirUse() throws {
        var jar = CookieJar(policy: .init(maximumCookies: 3))
        let x = try #require(URL(string: "https://x.test/")), y = try #require(URL(string: "https://y.test/"))
        jar.store(setCookie: ["x1=1", "x2=1"], from: x, at: Self.now)
        jar.store(setCookie: ["y1=1"], from: y, at: Self.now.addingTimeInterval(1))
        #expect(jar.cookieHeader(for: x, at: Self.now.addingTimeInterval(2)) == "x1=1; x2=1")
        jar.store(setCookie: ["z1=1"], from: URL(string: "https://z.test/")!, at: Self.now.addingTimeInterval(3))
        #expect(Set(jar.cookies.map(\.name)) == ["x1", "x2", "z1"])
        jar.store(setCookie: ["z2=1"], from: URL(string: "https://z.test/")!, at: Self.now.addingTimeInterval(4))
        #expect(Set(jar.cookies.map(\.name)) == ["x2", "z1", "z2"])
        // Many reads later the order still holds, and a read keeps no more than it needs.
        for second in 5..<2_005 { _ = jar.cookieHeader(for: x, at: Self.now.addingTimeInterval(Double(second))) }
        jar.store(setCookie: ["w1=1"], from: URL(string: "https://w.test/")!, at: Self.now.addingTimeInterval(3_000))
        #expect(Set(jar.cookies.map(\.name)) == ["x2", "z2", "w1"])
    }

    @Test(arguments: [CookieJar.Policy(maximumCookiesPerDomain: 0), .init(maximumCookies: 0), .init(maximumCookiesPerDomain: -5, maximumCookies: -1)])
    func aLimitOfZeroKeepsNothing(policy: CookieJar.Policy) {
        var jar = CookieJar(policy: policy)
        jar.store(setCookie: ["a=1"], from: Self.site, at: Self.now)
        #expect(jar.isEmpty)
    }

    @Test func aSavedJarLoadsWithItsCookiesAndItsLimitsApply() throws {
        let saved = filled(["a=1; Path=/; Max-Age=3600", "session=2; Path=/", "wide=3; Domain=example.com; Secure; HttpOnly; SameSite=Strict"])
        let data = try JSONEncoder().encode(saved)
        let loaded = try JSONDecoder().decode(CookieJar.self, from: data)
        #expect(loaded.cookies == saved.cookies && loaded == saved)
        #expect(header(loaded, "https://www.example.com/shop") == header(saved, "https://www.example.com/shop"))
        #expect(loaded.endingSession().cookies.map(\.name) == ["a"])
        var tight = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        tight["policy"] = ["maximumCookieSize": 4096, "maximumCookiesPerDomain": 1, "maximumCookies": 10, "publicSuffixes": [String]()]
        let bounded = try JSONDecoder().decode(CookieJar.self, from: JSONSerialization.data(withJSONObject: tight))
        #expect(bounded.count == 2)
    }

    /// Found by the SetCookie fuzz target: a host's own `b` and a `b; Domain=` for the same host
    /// tie on domain, path and name, and came out in whatever order the jar's storage held them,
    /// so a saved jar read back as another list and printed differently.
    @Test func aHostsOwnCookieAndADomainCookieOfTheSameNameKeepOneOrderThroughASave() throws {
        let shop = URL(string: "https://shop.example.co.uk/cart/")!
        let fields = (0..<20).flatMap { ["b\($0)=1", "b\($0)=2; Domain=shop.example.co.uk"] }
        let forward = filled(fields, from: shop)
        let backward = filled(fields.reversed(), from: shop)
        #expect(forward.count == 40)
        // Stored in the other order, the same list (by identity: times of use differ).
        #expect(forward.cookies.map { "\($0)=\($0.value)" } == backward.cookies.map { "\($0)=\($0.value)" })
        #expect(forward.cookies.prefix(2).map(\.hostOnly) == [true, false])
        let loaded = try JSONDecoder().decode(CookieJar.self, from: JSONEncoder().encode(forward))
        #expect(loaded.cookies == forward.cookies)
        #expect("\(loaded)" == "\(forward)")
        let field = header(forward, "https://shop.example.co.uk/cart/x")
        #expect(field == header(loaded, "https://shop.example.co.uk/cart/x"))
        #expect(field?.hasPrefix("b0=1; b0=2; b1=1; b1=2; ") == true)
    }

    @Test func aSavedJarEditedToHoldALineBreakCannotPutItIntoARequest() throws {
        let saved = filled(["a=1; Path=/"])
        var text = try String(decoding: JSONEncoder().encode(saved), as: UTF8.self)
        text = text.replacingOccurrences(of: #""value":"1""#, with: #""value":"1\r\nX-Injected: yes""#)
        let loaded = try JSONDecoder().decode(CookieJar.self, from: Data(text.utf8))
        #expect(loaded.isEmpty)
        var jar = CookieJar()
        jar.insert(Cookie(name: "bad name", value: "1", domain: "example.com"), at: Self.now)
        jar.insert(Cookie(name: "semi", value: "a;b", domain: "example.com"), at: Self.now)
        #expect(jar.isEmpty)
    }

    @Test func noPrintedFormShowsAValue() {
        let jar = filled(["session=TOPSECRET-1; Path=/; Secure; HttpOnly; Max-Age=60", "pref=TOPSECRET-2; Domain=example.com"])
        let cookie = jar.cookies[0]
        var dumped = ""
        dump(jar, to: &dumped)
        var dumpedCookie = ""
        dump(cookie, to: &dumpedCookie)
        let store = CookieStore(jar)
        let forms = [
            "\(jar)", String(describing: jar), String(reflecting: jar), dumped, "\(cookie)", String(reflecting: cookie), dumpedCookie,
            "\(store)", String(reflecting: store), "\(Mirror(reflecting: cookie).children.map { "\($0.value)" })",
        ]
        for form in forms {
            #expect(!form.contains("TOPSECRET"), "\(form)")
        }
        #expect("\(cookie)".contains("session=<redacted>") || "\(cookie)".contains("pref=<redacted>"))
    }

    @Test func aCookieMadeInCodeIsStoredWithoutTheOriginRules() {
        var jar = CookieJar()
        jar.insert(Cookie(name: "pref", value: "dark", domain: ".Example.com", hostOnly: false, path: "/"), at: Self.now)
        #expect(header(jar, "http://api.example.com/") == "pref=dark")
    }
}
