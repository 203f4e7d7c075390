import Courier
import Foundation

/// 9. The cookie jar: what storing one cookie costs at the jar's cap (3,000 cookies, so every
/// store evicts the least recently used) against storing one below it.
enum CookieBenchmarks {
    /// 9a. `store(setCookie:)` of a new site's cookie into a full jar (3,000 cookies across
    /// 3,000 domains: each store evicts one) against the same into a jar of 1,000 (no eviction).
    /// Microseconds per store. Before the use-ordered queue, a store at the cap scanned every
    /// cookie and rebuilt every domain's dictionary (0.4–0.7 ms, against 8–22 µs below it).
    static func storeAtTheCap(runs: Int, iterations: Int) throws -> Comparison {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        func filled(_ count: Int) throws -> CookieJar {
            var jar = CookieJar()
            for site in 0..<count {
                guard let url = URL(string: "https://site\(site).example/") else { throw BenchmarkError(message: "bad URL") }
                jar.store(setCookie: ["id=\(site); Max-Age=86400; Path=/"], from: url, at: now)
            }
            return jar
        }
        let urls = try (0..<iterations).map { index in
            guard let url = URL(string: "https://new\(index).example/") else { throw BenchmarkError(message: "bad URL") }
            return url
        }
        var comparison = Comparison(name: "9a. cookie store at the 3,000 cap vs below it (1,000)", unit: "µs", target: "≈ 1")
        for _ in 0..<runs {
            var full = try filled(3_000)
            var index = 0
            let atCap = nanosecondsPerCall(iterations: iterations) {
                full.store(setCookie: ["id=1; Max-Age=86400; Path=/"], from: urls[index], at: now)
                index += 1
            } / 1000
            var partial = try filled(1_000)
            index = 0
            let below = nanosecondsPerCall(iterations: iterations) {
                partial.store(setCookie: ["id=1; Max-Age=86400; Path=/"], from: urls[index], at: now)
                index += 1
            } / 1000
            guard full.count == 3_000, partial.count == 1_000 + iterations else { throw BenchmarkError(message: "the jars did not fill as planned") }
            comparison.courier.append(atCap)
            comparison.baseline.append(below)
        }
        return comparison
    }

    /// A jar of 3,000 cookies, 50 of them for `api.example.com` (the per-domain cap), the rest one
    /// each for other sites; or, `alone`, the 50 in a jar of their own.
    static func hostJar(alone: Bool, now: Date) throws -> (CookieJar, URL) {
        guard let api = URL(string: "https://api.example.com/v1/items") else { throw BenchmarkError(message: "bad URL") }
        var jar = CookieJar()
        if !alone {
            for site in 0..<2_950 {
                guard let url = URL(string: "https://site\(site).example/") else { throw BenchmarkError(message: "bad URL") }
                jar.store(setCookie: ["id=\(site); Max-Age=86400; Path=/"], from: url, at: now)
            }
        }
        jar.store(setCookie: (0..<50).map { "c\($0)=value-\($0)-0123456789abcdef; Max-Age=86400; Path=/; Secure; HttpOnly" }, from: api, at: now)
        guard jar.count == (alone ? 50 : 3_000) else { throw BenchmarkError(message: "the jar did not fill as planned (\(jar.count))") }
        return (jar, api)
    }

    /// 9b. `cookieHeader(for:)` for a host with 50 cookies in a 3,000-cookie jar, against the
    /// same 50 in a jar of their own: microseconds per call (the goal: ≤ 5 µs).
    static func headerForABusyHost(runs: Int, iterations: Int) throws -> Comparison {
        var now = Date(timeIntervalSince1970: 1_800_000_000)
        var comparison = Comparison(name: "9b. cookieHeader, 50 cookies for the host, in a 3,000-cookie jar vs alone", unit: "µs", target: "≤ 5 µs")
        for _ in 0..<runs {
            var (full, url) = try hostJar(alone: false, now: now)
            var (alone, _) = try hostJar(alone: true, now: now)
            var length = 0
            comparison.courier.append(nanosecondsPerCall(iterations: iterations) {
                now += 0.001
                length &+= full.cookieHeader(for: url, at: now)?.utf8.count ?? 0
            } / 1000)
            comparison.baseline.append(nanosecondsPerCall(iterations: iterations) {
                now += 0.001
                length &+= alone.cookieHeader(for: url, at: now)?.utf8.count ?? 0
            } / 1000)
            guard length > 0 else { throw BenchmarkError(message: "no Cookie field") }
        }
        return comparison
    }

    /// 9c. `store(setCookie:)` of a cookie that replaces one of the host's 50 (a session
    /// refreshed) in a 3,000-cookie jar, against the same in a jar of the 50 alone.
    static func storeForABusyHost(runs: Int, iterations: Int) throws -> Comparison {
        var now = Date(timeIntervalSince1970: 1_800_000_000)
        var comparison = Comparison(name: "9c. store replacing one of the host's 50 cookies, 3,000-cookie jar vs alone", unit: "µs", target: "≤ 5 µs")
        for _ in 0..<runs {
            var (full, url) = try hostJar(alone: false, now: now)
            var (alone, _) = try hostJar(alone: true, now: now)
            var index = 0
            comparison.courier.append(nanosecondsPerCall(iterations: iterations) {
                now += 0.001
                index += 1
                full.store(setCookie: ["c\(index % 50)=refreshed-\(index); Max-Age=86400; Path=/; Secure; HttpOnly"], from: url, at: now)
            } / 1000)
            comparison.baseline.append(nanosecondsPerCall(iterations: iterations) {
                now += 0.001
                index += 1
                alone.store(setCookie: ["c\(index % 50)=refreshed-\(index); Max-Age=86400; Path=/; Secure; HttpOnly"], from: url, at: now)
            } / 1000)
            guard full.count == 3_000, alone.count == 50 else { throw BenchmarkError(message: "a store changed the jar's size") }
        }
        return comparison
    }

    /// 9d. `store(setCookie:)` from an `http` origin (a plain cookie replacing one of 50 the
    /// site keeps) into the 3,000-cookie jar, against the same beside the 50 alone. An insecure
    /// origin may not shadow a `Secure` cookie, so each store asks which domains hold one of its
    /// name: before the per-name count, that was every domain in the jar.
    static func insecureStoreForABusyJar(runs: Int, iterations: Int) throws -> Comparison {
        var now = Date(timeIntervalSince1970: 1_800_000_000)
        guard let web = URL(string: "http://web.example.com/") else { throw BenchmarkError(message: "bad URL") }
        var comparison = Comparison(name: "9d. store from an http origin, 3,000-cookie jar vs alone", unit: "µs", target: "≤ 5 µs")
        for _ in 0..<runs {
            var (full, _) = try hostJar(alone: false, now: now)
            var (alone, _) = try hostJar(alone: true, now: now)
            var index = 0
            comparison.courier.append(nanosecondsPerCall(iterations: iterations) {
                now += 0.001
                index += 1
                full.store(setCookie: ["s\(index % 50)=plain-\(index); Max-Age=86400; Path=/"], from: web, at: now)
            } / 1000)
            comparison.baseline.append(nanosecondsPerCall(iterations: iterations) {
                now += 0.001
                index += 1
                alone.store(setCookie: ["s\(index % 50)=plain-\(index); Max-Age=86400; Path=/"], from: web, at: now)
            } / 1000)
            guard full.count == 3_000, alone.count == 100 else { throw BenchmarkError(message: "the jars did not fill as planned (\(full.count), \(alone.count))") }
        }
        return comparison
    }
}
