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
}
