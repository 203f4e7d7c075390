// fuzz: seeded-runs 20000
@testable import CourierCookies
@testable import CourierCore
import Foundation

/// `Set-Cookie` fields into a jar. The first byte picks the URL that set them (http, https, an
/// IP address, localhost, a registry's subdomain); the rest is one field per line. Rules checked
/// beyond "no crash":
/// - a refused field throws a `CookieRejection`; an accepted cookie has a token name or none (a
///   nameless value), no control character anywhere in its field, at most 4,096 bytes of name and value, a lowercase domain without a leading dot
///   that covers the host (the host itself when host-only), a path starting with `/`, `Secure`
///   only from https, and an expiry at most 400 days ahead;
/// - the jar never holds more than its limits, and every cookie it would send goes to that URL;
/// - the `Cookie` field it makes holds no line break or control character;
/// - the jar's description and dump are the same whatever its values, and it reads back from
///   JSON unchanged (on one input in four: see `checksPrintedForms`);
/// - splitting a field never makes more text than it had.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let url = urls[Int(bytes[0]) % urls.count]
    let text = String(decoding: UnsafeBufferPointer(start: bytes + 1, count: count - 1), as: UTF8.self)
    let fields = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let policy = CookieJar.Policy(maximumCookiesPerDomain: 5, maximumCookies: 12)
    withinBudget("SetCookie") {
        for field in fields {
            let split = CookieJar.splitJoinedSetCookie(field)
            require(split.reduce(0) { $0 + $1.utf8.count } <= field.utf8.count, "splitting made text: \(field.debugDescription)")
            do {
                let cookie = try Cookie(setCookie: field, from: url, at: now, policy: policy)
                check(cookie, from: url, field: field)
            } catch {
                // A CookieRejection by the signature: nothing else can come out.
            }
        }
        var jar = CookieJar(policy: policy)
        jar.store(setCookie: fields, from: url, at: now)
        require(jar.count <= 12 && jar.count == jar.cookies.count, "the jar holds \(jar.count) cookies")
        for (_, group) in Dictionary(grouping: jar.cookies, by: \.domain) {
            require(group.count <= 5, "one domain holds \(group.count) cookies")
        }
        let sent = jar.cookies(for: url, at: now)
        require(sent.allSatisfy { $0.matches(url) }, "a cookie sent to a URL it does not match")
        if let header = jar.cookieHeader(for: url, at: now) {
            require(!header.utf8.contains { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }, "a control character in the Cookie field")
        }
        guard checksPrintedForms(bytes, count) else { return }
        // Printed forms do not depend on the values: the same jar with other values prints alike.
        let other = CookieJar(policy: policy, cookies: jar.cookies.map { cookie in
            var changed = cookie
            changed.value = "V" + cookie.value
            return changed
        })
        var dumped = "", dumpedOther = ""
        dump(jar, to: &dumped)
        dump(other, to: &dumpedOther)
        require("\(jar)" == "\(other)" && dumped == dumpedOther, "a value shows in the jar's description or dump")
        let data = (try? JSONEncoder().encode(jar)) ?? Data()
        let back = try? JSONDecoder().decode(CookieJar.self, from: data)
        require(back?.cookies == jar.cookies, "the jar did not read back from JSON")
    }
    return 0
}

/// Whether this input's jar is printed, dumped and sent through JSON: one input in four, told
/// by a hash of its bytes so that a failure reproduces from the input alone. Those checks cost
/// about twice the rest of an input (two jars dumped, one encoded and decoded), and they test
/// the jar's printing and coding, which a quarter of ten million inputs reaches as well; on
/// every input they held a run on this machine to 773 executions a second on average.
private func checksPrintedForms(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> Bool {
    // FNV-1a.
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for index in 0..<count { hash = (hash ^ UInt64(bytes[index])) &* 0x100_0000_01b3 }
    return hash % 4 == 0
}

private func check(_ cookie: Cookie, from url: URL, field: String) {
    let host = (url.host ?? "").lowercased()
    require(cookie.name.isEmpty || HTTPSyntax.isToken(cookie.name), "a name that is not a token: \(field.debugDescription)")
    require(!cookie.name.isEmpty || !cookie.value.isEmpty, "a cookie with neither name nor value: \(field.debugDescription)")
    // RFC 6265bis: a control character anywhere in the field, attributes included, voids it.
    require(!field.utf8.contains { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }, "a field with a control character kept")
    require(cookie.name.utf8.count + cookie.value.utf8.count <= 4096, "a cookie over 4,096 bytes")
    // Leading bytes, not Characters: "." or "/" with a combining mark after it is another Character.
    require(cookie.domain == cookie.domain.lowercased() && cookie.domain.utf8.first != UInt8(ascii: "."), "a domain not canonical: \(cookie.domain)")
    if cookie.hostOnly {
        require(cookie.domain == host, "a host-only cookie for \(cookie.domain) from \(host)")
    } else {
        require(host == cookie.domain || host.hasSuffix("." + cookie.domain), "a cookie for \(cookie.domain) from \(host)")
        require(!CookieDomain.isPublicSuffix(cookie.domain, extra: []), "a cookie for the public suffix \(cookie.domain)")
    }
    require(cookie.path.utf8.first == UInt8(ascii: "/"), "a path without a slash: \(cookie.path.debugDescription)")
    // A secure origin: https, or loopback (RFC 6265bis).
    require(!cookie.secure || url.scheme == "https" || host == "localhost" || host == "127.0.0.1", "Secure from \(url.absoluteString)")
    if let expires = cookie.expires { require(expires <= now.addingTimeInterval(Cookie.maximumLifetime), "an expiry past 400 days") }
}

private let now = Date(timeIntervalSince1970: 1_800_000_000)
private let urls = [
    "http://www.example.com/a/b", "https://www.example.com/", "http://127.0.0.1:8080/x", "http://localhost/", "https://shop.example.co.uk/cart/",
].compactMap { URL(string: $0) }
