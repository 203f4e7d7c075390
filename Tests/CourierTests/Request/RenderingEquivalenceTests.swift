import Foundation
import Testing

import Courier
@testable import CourierCore
@testable import CourierURLSession

/// The URL every request is sent with is written in one pass into a scratch buffer; the
/// part-by-part composition (used for redacted renderings) is the reference it must match.
@Suite("Rendering: the one-pass URL equals the composed one")
struct RenderingEquivalenceTests {
    static let bases = [
        "https://api.test", "https://api.test/", "https://api.test/v1", "https://api.test/v1/",
        "https://api.test/v1?fixed=1", "https://api.test/v1/?a=%20b&c", "https://api.test/v1?", "http://127.0.0.1:8080/x",
        "https://user:pass@api.test/v1", "https://[::1]:8443/a%2Fb", "https://api.test/caf%C3%A9?q=%E2%9C%93",
        "https://api.test/a;b,c=d/",
    ]

    static func randomRequest(_ generator: inout RandomSource) -> Request {
        let base = bases.randomElement(using: &generator) ?? "https://api.test"
        var request = Request.get |> baseURL(base)
        for _ in 0..<Int.random(in: 0...6, using: &generator) {
            let a = FuzzTests.randomString(&generator)
            let b = FuzzTests.randomString(&generator)
            switch Int.random(in: 0..<5, using: &generator) {
            case 0: request = request |> path(a)
            case 1: request = request |> path(a, b, 42)
            case 2: request = request |> query(a, b)
            case 3: request = request |> query(percentEncoded: a, Bool.random(using: &generator) ? b : nil)
            default: request = request |> query(a, Optional<String>.none) |> query(b, [a, b])
            }
        }
        return request
    }

    @Test(arguments: 0..<20)
    func onePassMatchesComposition(seed: UInt64) throws {
        var generator = RandomSource.seeded(seed)
        for _ in 0..<100 {
            let request = Self.randomRequest(&generator)
            let base = try #require(request.baseURL)
            let composed = request.composedURLString(base, redacting: nil)
            #expect(request.urlString(redacting: nil) == composed, "seed \(seed): \(request.pathSegments) \(request.queryItems)")
        }
    }

    @Test(arguments: [100, 5_000, 50_000])
    func longAndMultiByteParts(repeats: Int) throws {
        // From a heap scratch buffer to past its limit (composed part by part), every byte
        // percent-encoded.
        let long = String(repeating: "é €/?#&=", count: repeats)
        let request = Request.get |> baseURL("https://api.test/v1?x=1") |> path(long) |> query(long, long)
        let base = try #require(request.baseURL)
        let plain = try #require(request.urlString(redacting: nil))
        #expect(plain == request.composedURLString(base, redacting: nil))
        #expect(plain.utf8.count > 3 * long.utf8.count)
        #expect(try request.validatedURL().absoluteString == plain)
    }

    @Test func fragmentOfAURLSetDirectlyIsNeverSent() throws {
        // A base URL assigned without a builder may carry a fragment: it is reported, and the
        // rendering used for descriptions still leaves it out.
        var request = Request.get
        request.baseURL = URL(string: "https://api.test/v1?a=1#frag")
        request = request |> path("x") |> query("b", "2")
        #expect(request.urlString(redacting: nil) == "https://api.test/v1/x?a=1&b=2")
        #expect(request.problems.contains { $0.kind == .invalidURL })
    }

    /// The origin-form target and the path, read from the rendered URL: the scheme and
    /// authority skipped, a query alone gets `/` before it, and no base URL gives the parts alone.
    @Test func theTargetAndThePathOfEveryShape() {
        #expect((Request.get |> baseURL("https://api.test")).path == "/")
        #expect((Request.get |> baseURL("https://api.test") |> query("a", "1")).target(redacting: nil) == "/?a=1")
        #expect((Request.get |> baseURL("https://api.test") |> query("a", "1")).path == "/")
        #expect((Request.get |> baseURL("https://user:pass@api.test:8443/v1/") |> path("caf\u{E9}", "a/b") |> query("q", "?")).path
            == "/v1/caf%C3%A9/a%2Fb")
        #expect((Request.get |> baseURL("http://[::1]:8080/x?fixed=1")).target(redacting: nil) == "/x?fixed=1")
        #expect((Request.get |> path("items") |> query("page", 2)).target(redacting: nil) == "/items?page=2")
        #expect((Request.get |> path("items") |> query("page", 2)).path == "/items")
    }
}
