import Courier
import Foundation
import Testing

/// `Set-Cookie` parsed as RFC 6265 §5.2–5.3 says, strictly where a server could do harm.
@Suite("Cookies: Set-Cookie parsing and the storage rules")
struct SetCookieTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let https = URL(string: "https://www.example.com/account/login")!
    static let http = URL(string: "http://www.example.com/account/login")!

    private func parse(_ field: String, from url: URL = https) throws(CookieRejection) -> Cookie {
        try Cookie(setCookie: field, from: url, at: Self.now)
    }

    @Test func aPlainCookieBelongsToItsHostAndTheRequestsDirectory() throws {
        let cookie = try parse("sid=abc")
        #expect(cookie.name == "sid" && cookie.value == "abc")
        #expect(cookie.domain == "www.example.com" && cookie.hostOnly)
        #expect(cookie.path == "/account")
        #expect(cookie.expires == nil && !cookie.secure && !cookie.httpOnly && cookie.sameSite == nil)
        #expect(cookie.created == Self.now && cookie.lastAccess == Self.now)
    }

    /// Found by the SetCookie fuzz target (in CI's 30-second run): ";" followed by a combining
    /// mark is one Character, so a Character search did not end the value there, and
    /// `a=1;\u{301} admin=true` stored the value `1;\u{301} admin=true`, which the jar then sent
    /// as two cookies: a server-chosen cookie injected into every later request.
    @Test func aSemicolonFollowedByACombiningMarkStillEndsTheValue() throws {
        let cookie = try parse("a=1;\u{301} admin=true; Path=/")
        #expect(cookie.value == "1" && cookie.path == "/")
        var jar = CookieJar()
        jar.store(setCookie: ["a=1;\u{301} admin=true; Path=/", "b=2\u{301};Domain=example.com"], from: Self.https, at: Self.now)
        let header = jar.cookieHeader(for: Self.https, at: Self.now) ?? ""
        #expect(!header.contains("admin") && header.contains("a=1"), "\(header)")
        #expect(jar.cookies.first { $0.name == "b" }.map { !$0.hostOnly && $0.value == "2\u{301}" } == true)
    }

    @Test func attributesAreReadCaseInsensitivelyAndTheLastOfEachWins() throws {
        let cookie = try parse(" sid = a b ;PATH=/x; path=/y; secure; HTTPONLY; SameSite=lax; Domain=EXAMPLE.com; Unknown=1")
        #expect(cookie.name == "sid" && cookie.value == "a b")
        #expect(cookie.path == "/y")
        #expect(cookie.secure && cookie.httpOnly && cookie.sameSite == .lax)
        #expect(cookie.domain == "example.com" && !cookie.hostOnly)
    }

    /// Attribute names and SameSite values are compared in ASCII case: Unicode case mapping
    /// upper-cases `ſ` (a long s) to `S`, so `SameSite=ſtrict` was read as `Strict`, which a
    /// browser reads as no value.
    @Test func attributesAreComparedInASCIICaseOnly() throws {
        #expect(try parse("a=1; SameSite=\u{17F}trict").sameSite == nil)
        #expect(try parse("a=1; SameSite=STRICT").sameSite == .strict)
        #expect(try parse("a=1; samesite=None; Secure").sameSite == Cookie.SameSite.none)
        #expect(try parse("a=1; SameSite=lAx").sameSite == .lax)
    }

    @Test(arguments: [
        ("", CookieRejection.noNameValuePair),
        ("=", .noNameValuePair),
        (" = ; Path=/", .noNameValuePair),
        ("na me=1", .invalidName),
        ("naïve=1", .invalidName),
        ("a=b\u{0}c", .controlCharacter),
        ("a=b\u{7F}", .controlCharacter),
        ("a=line\nbreak", .controlCharacter),
        // RFC 6265bis §5.6: a control character in an attribute voids the whole field too.
        ("a=1; Path=/\u{1}x", .controlCharacter),
        ("a=1; Domain=example.com\u{7F}", .controlCharacter),
        ("a=1; Unknown=\u{0}", .controlCharacter),
        // A nameless cookie may not pose as a prefixed one.
        ("__Host-sid", .prefixRequirementsUnmet),
        ("__SECURE-x; Secure", .prefixRequirementsUnmet),
        // Found by the SetCookie fuzz target: a nameless value holding "=" would go back as a
        // named cookie (`admin=1`).
        ("=admin=1", .invalidName),
        // RFC 6265bis §5.7: SameSite=None must come with Secure (the independent suite's case).
        ("a=1; SameSite=None", .sameSiteNoneWithoutSecure),
        ("a=1; SameSite=none; Path=/", .sameSiteNoneWithoutSecure),
    ])
    func aMalformedFieldIsRefused(field: String, rejection: CookieRejection) {
        #expect(throws: rejection) { try parse(field) }
    }

    @Test func aCookieOverTheSizeLimitIsRefused() throws {
        #expect(throws: CookieRejection.tooLarge(limit: 4096)) { try parse("big=" + String(repeating: "x", count: 4094)) }
        #expect(try parse("big=" + String(repeating: "x", count: 4093)).value.count == 4093)
        let small = CookieJar.Policy(maximumCookieSize: 10)
        #expect(throws: CookieRejection.tooLarge(limit: 10)) { try Cookie(setCookie: "name=value12", from: Self.https, at: Self.now, policy: small) }
    }

    @Test func anAttributeValueOverAKilobyteIsIgnored() throws {
        let cookie = try parse("a=1; Path=/" + String(repeating: "p", count: 1024))
        #expect(cookie.path == "/account")
    }

    @Test(arguments: [
        ("a=1; Domain=other.com", CookieRejection.domainMismatch),
        ("a=1; Domain=ww.example.com", .domainMismatch),
        ("a=1; Domain=sub.www.example.com", .domainMismatch),
        ("a=1; Domain=com", .publicSuffix),
        ("a=1; Domain=.com", .publicSuffix),
        // An internationalized Domain counts in its ASCII form: another site's name here.
        ("a=1; Domain=exämple.com", .domainMismatch),
        ("a=1; Domain=ex ämple.com", .invalidDomain),
    ])
    func aDomainThatDoesNotCoverTheHostIsRefused(field: String, rejection: CookieRejection) {
        #expect(throws: rejection) { try parse(field) }
    }

    @Test(arguments: ["https://shop.example.co.uk/", "https://me.github.io/", "https://a.b.com.au/"])
    func aRegistrysSuffixIsAPublicSuffix(url: String) throws {
        let url = try #require(URL(string: url))
        let host = try #require(url.host())
        let suffix = host.split(separator: ".").suffix(2).joined(separator: ".")
        #expect(throws: CookieRejection.publicSuffix) { try Cookie(setCookie: "a=1; Domain=\(suffix)", from: url, at: Self.now) }
    }

    @Test func aPublicSuffixThatIsTheHostItselfGivesAHostOnlyCookie() throws {
        let cookie = try Cookie(setCookie: "a=1; Domain=localhost", from: URL(string: "http://localhost:8080/")!, at: Self.now)
        #expect(cookie.domain == "localhost" && cookie.hostOnly)
    }

    @Test func extraPublicSuffixesComeFromThePolicy() {
        let policy = CookieJar.Policy(publicSuffixes: ["Example.com"])
        #expect(throws: CookieRejection.publicSuffix) {
            try Cookie(setCookie: "a=1; Domain=example.com", from: Self.https, at: Self.now, policy: policy)
        }
    }

    @Test func anIPAddressGetsNoParentDomain() throws {
        let ip = URL(string: "http://127.0.0.1:8080/")!
        #expect(throws: CookieRejection.domainMismatch) { try Cookie(setCookie: "a=1; Domain=0.0.1", from: ip, at: Self.now) }
        let cookie = try Cookie(setCookie: "a=1; Domain=127.0.0.1", from: ip, at: Self.now)
        #expect(cookie.domain == "127.0.0.1")
        #expect(!cookie.matches(URL(string: "http://1.127.0.0.1/")!))
    }

    @Test func secureNeedsASecureOrigin() throws {
        #expect(throws: CookieRejection.secureFromInsecureOrigin) { try parse("a=1; Secure", from: Self.http) }
        #expect(try parse("a=1; Secure").secure)
    }

    @Test(arguments: [
        ("__Secure-a=1", false), ("__Secure-a=1; Secure", true), ("__secure-a=1; Secure; Domain=example.com", true),
        ("__Host-a=1; Secure; Path=/", true), ("__Host-a=1; Secure", false), ("__HOST-a=1; Secure; Path=/; Domain=www.example.com", false),
        ("__Host-a=1; Path=/", false),
    ])
    func prefixesNeedWhatTheyPromise(field: String, accepted: Bool) {
        do {
            _ = try parse(field)
            #expect(accepted, "\(field) was accepted")
        } catch {
            #expect(!accepted && error == .prefixRequirementsUnmet, "\(field): \(error)")
        }
    }

    @Test func maxAgeWinsOverExpiresWhateverTheOrder() throws {
        let cookie = try parse("a=1; Max-Age=60; Expires=Wed, 21 Oct 2037 07:28:00 GMT")
        #expect(cookie.expires == Self.now.addingTimeInterval(60))
        let other = try parse("a=1; Expires=Wed, 21 Oct 2037 07:28:00 GMT; Max-Age=60")
        #expect(other.expires == Self.now.addingTimeInterval(60))
    }

    @Test(arguments: ["0", "-1", "-99999999999999999999999"])
    func aMaxAgeOfZeroOrLessExpiresAtOnce(maxAge: String) throws {
        #expect(try parse("a=1; Max-Age=\(maxAge)").isExpired(at: Self.now))
    }

    @Test(arguments: ["99999999999999999999999999", "9223372036854775807", "34560001"])
    func anExpiryIsCappedAtFourHundredDays(maxAge: String) throws {
        #expect(try parse("a=1; Max-Age=\(maxAge)").expires == Self.now.addingTimeInterval(Cookie.maximumLifetime))
        #expect(try parse("a=1; Expires=Fri, 31 Dec 9999 23:59:59 GMT").expires == Self.now.addingTimeInterval(Cookie.maximumLifetime))
    }

    @Test(arguments: ["1.5", "+60", "", "60s", " "])
    func aMalformedMaxAgeIsIgnored(maxAge: String) throws {
        #expect(try parse("a=1; Max-Age=\(maxAge)").expires == nil)
    }

    @Test func aPathThatDoesNotStartWithASlashIsTheDefaultPath() throws {
        #expect(try parse("a=1; Path=relative").path == "/account")
        #expect(try parse("a=1; Path=").path == "/account")
        #expect(try Cookie(setCookie: "a=1", from: URL(string: "https://x.test")!, at: Self.now).path == "/")
        #expect(try Cookie(setCookie: "a=1", from: URL(string: "https://x.test/file")!, at: Self.now).path == "/")
    }

    @Test func aURLThatIsNotHTTPSetsNothing() {
        #expect(throws: CookieRejection.unsupportedURL) { try Cookie(setCookie: "a=1", from: URL(string: "file:///tmp/x")!, at: Self.now) }
        #expect(throws: CookieRejection.unsupportedURL) { try Cookie(setCookie: "a=1", from: URL(string: "ftp://x.test/")!, at: Self.now) }
    }

    @Test func aRejectionsDescriptionNeverShowsTheValue() {
        let all: [CookieRejection] = [
            .noNameValuePair, .invalidName, .controlCharacter, .tooLarge(limit: 1), .unsupportedURL, .domainMismatch, .publicSuffix,
            .invalidDomain, .secureFromInsecureOrigin, .prefixRequirementsUnmet, .wouldOverwriteSecureCookie, .sameSiteNoneWithoutSecure,
        ]
        #expect(Set(all.map(\.description)).count == all.count)
    }

    @Test(arguments: [
        ("a=1, b=2", ["a=1", "b=2"]),
        ("a=1; Expires=Wed, 21 Oct 2037 07:28:00 GMT, b=2; Path=/", ["a=1; Expires=Wed, 21 Oct 2037 07:28:00 GMT", "b=2; Path=/"]),
        ("a=1; Expires=Wed, 21 Oct 2037 07:28:00 GMT", ["a=1; Expires=Wed, 21 Oct 2037 07:28:00 GMT"]),
        // A comma outside an Expires date is where a transport joined two fields (a value may
        // not hold one): an invalid field stays apart from the valid one before it.
        ("a=x,y", ["a=x", "y"]),
        ("a=b, =", ["a=b", "="]),
        ("a=1; expires=Wednesday, 21-Oct-37 07:28:00 GMT, b=2", ["a=1; expires=Wednesday, 21-Oct-37 07:28:00 GMT", "b=2"]),
        ("a=1; Path=/, b=2; Expires=Wed, 21 Oct 2037 07:28:00 GMT, c=3", ["a=1; Path=/", "b=2; Expires=Wed, 21 Oct 2037 07:28:00 GMT", "c=3"]),
        ("", []),
    ])
    func aFieldOfJoinedCookiesIsSplitWhereANewCookieStarts(field: String, cookies: [String]) {
        #expect(CookieJar.splitJoinedSetCookie(field) == cookies)
    }

    /// A field with no "=" is a value with an empty name (RFC 6265bis §5.6), sent back as the
    /// value alone.
    @Test func aNamelessCookieIsKeptAndSentAsItsValue() throws {
        let cookie = try parse("justavalue; Path=/")
        #expect(cookie.name.isEmpty && cookie.value == "justavalue")
        let named = try parse("=other; Path=/")
        #expect(named.name.isEmpty && named.value == "other")
        var jar = CookieJar()
        jar.store(setCookie: ["justavalue; Path=/", "a=1; Path=/"], from: Self.https, at: Self.now)
        #expect(jar.cookieHeader(for: Self.https, at: Self.now) == "justavalue; a=1")
    }

    /// The last Domain attribute decides, and an empty one means host-only (RFC 6265bis §5.7):
    /// `Domain=example.com; Domain=` does not reach the parent domain.
    @Test func anEmptyLastDomainMakesTheCookieHostOnly() throws {
        let cookie = try parse("a=1; Domain=example.com; Domain=")
        #expect(cookie.hostOnly && cookie.domain == "www.example.com")
        let parent = try parse("a=1; Domain=; Domain=example.com")
        #expect(!parent.hostOnly && parent.domain == "example.com")
        // And a __Host- cookie may carry an empty Domain: it stays host-only.
        #expect(try parse("__Host-a=1; Secure; Path=/; Domain=").hostOnly)
    }
}
