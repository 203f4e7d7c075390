import Courier
@testable import CourierCaching
@testable import CourierCore
import Foundation
import Testing

/// The cache's decisions as values: a request, a stored response, a time; no store, network or
/// clock.
@Suite("Cache decisions (RFC 9111 §4), as values")
struct CacheDecisionTests {
    static let stored = Date(timeIntervalSince1970: 1_800_000_000)
    static let request = Request.get |> url("https://api.test/items")

    /// A response stored at `stored`, with `cacheControl`, `seconds` later.
    static func entry(_ cacheControl: String?, headers: HTTPHeaders = [:]) -> CachedResponse {
        var fields = headers
        fields.set(.date, HTTPDate.format(stored))
        if let cacheControl { fields.set(.cacheControl, cacheControl) }
        return CachedResponse(
            url: "https://api.test/items", status: 200, headers: fields, body: Data("[]".utf8), varied: [:], requestTime: stored,
            responseTime: stored)
    }

    static func decide(
        _ entry: CachedResponse?, after seconds: TimeInterval, for request: Request = request,
        options: HTTPCache.Options = HTTPCache.Options(), background: Bool = false
    ) -> CacheDecision {
        CacheDecision(for: request, stored: entry, now: stored.addingTimeInterval(seconds), options: options, revalidatesInBackground: background)
    }

    @Test func nothingStoredIsFetchedUnlessOnlyACachedAnswerWillDo() {
        #expect(Self.decide(nil, after: 0).action == .fetch)
        #expect(Self.decide(nil, after: 0, for: Self.request |> header("Cache-Control", "only-if-cached")).action == .unsatisfiable)
        #expect(Self.decide(nil, after: 0, for: Self.request |> cachePolicy(.returnCacheDataDontLoad)).action == .unsatisfiable)
    }

    @Test func aFreshResponseIsAHitWithItsAgeAndLifetime() {
        let decision = Self.decide(Self.entry("max-age=60"), after: 20)
        #expect(decision.action == .serve(.hit, detail: nil))
        #expect(decision.age == 20)
        #expect(decision.lifetime == 60)
    }

    @Test func aStaleResponseIsRevalidatedAndMayAnswerOnErrorOnlyWithinItsWindow() {
        #expect(Self.decide(Self.entry("max-age=60"), after: 61).action == .revalidate(staleIfError: false))
        #expect(Self.decide(Self.entry("max-age=60, stale-if-error=30"), after: 80).action == .revalidate(staleIfError: true))
        #expect(Self.decide(Self.entry("max-age=60, stale-if-error=30"), after: 100).action == .revalidate(staleIfError: false))
        // must-revalidate forbids a stale answer, even on error.
        #expect(Self.decide(Self.entry("max-age=60, stale-if-error=30, must-revalidate"), after: 80).action == .revalidate(staleIfError: false))
    }

    @Test func theRequestsDirectivesDecideToo() {
        let fresh = Self.entry("max-age=600")
        #expect(Self.decide(fresh, after: 1, for: Self.request |> header("Cache-Control", "no-cache")).action == .revalidate(staleIfError: false))
        #expect(Self.decide(fresh, after: 1, for: Self.request |> header("Pragma", "no-cache")).action == .revalidate(staleIfError: false))
        #expect(Self.decide(fresh, after: 20, for: Self.request |> header("Cache-Control", "max-age=10")).action == .revalidate(staleIfError: false))
        #expect(Self.decide(fresh, after: 20, for: Self.request |> header("Cache-Control", "min-fresh=590")).action == .revalidate(staleIfError: false))
        let stale = Self.entry("max-age=60")
        #expect(Self.decide(stale, after: 80, for: Self.request |> header("Cache-Control", "max-stale=30")).action == .serve(.stale, detail: nil))
        #expect(Self.decide(stale, after: 100, for: Self.request |> header("Cache-Control", "max-stale=30")).action == .revalidate(staleIfError: false))
    }

    @Test func theCachePolicyOverridesTheDirectives() {
        let stale = Self.entry("max-age=60")
        #expect(Self.decide(Self.entry("max-age=600"), after: 1, for: Self.request |> cachePolicy(.reloadIgnoringLocalCacheData)).action == .fetch)
        #expect(Self.decide(stale, after: 600, for: Self.request |> cachePolicy(.returnCacheDataElseLoad)).action == .serve(.stale, detail: nil))
        #expect(Self.decide(stale, after: 30, for: Self.request |> cachePolicy(.returnCacheDataDontLoad)).action == .serve(.hit, detail: nil))
    }

    @Test func staleWhileRevalidateAnswersAtOnceOnlyWithSomethingToRevalidateAfterTheCall() {
        let entry = Self.entry("max-age=60, stale-while-revalidate=30")
        #expect(Self.decide(entry, after: 80, background: true).action == .serveAndRevalidateInBackground)
        // Without a background executor the revalidation runs in the call, the stale response
        // answering only if it fails.
        #expect(Self.decide(entry, after: 80).action == .revalidate(staleIfError: true))
        #expect(Self.decide(entry, after: 100, background: true).action == .revalidate(staleIfError: false))
    }

    @Test func aSharedCacheReadsSMaxAgeAndItsRevalidationRule() {
        let entry = Self.entry("max-age=600, s-maxage=60, stale-if-error=300")
        let shared = HTTPCache.Options(mode: .shared)
        #expect(Self.decide(entry, after: 100).action == .serve(.hit, detail: nil))
        #expect(Self.decide(entry, after: 100, options: shared).lifetime == 60)
        // s-maxage implies proxy-revalidate in a shared cache: no stale answer on error.
        #expect(Self.decide(entry, after: 100, options: shared).action == .revalidate(staleIfError: false))
    }

    @Test func heuristicFreshnessIsAFifthOfTheAgeSinceModifiedWithinTheLimit() {
        let modified = HTTPDate.format(Self.stored.addingTimeInterval(-1_000))
        let entry = Self.entry(nil, headers: ["Last-Modified": modified])
        #expect(Self.decide(entry, after: 50).lifetime == 200)
        #expect(Self.decide(entry, after: 50, options: HTTPCache.Options(heuristicFraction: 0.1)).lifetime == 100)
        #expect(Self.decide(entry, after: 50).action == .serve(.hit, detail: nil))
        #expect(Self.decide(entry, after: 50, options: HTTPCache.Options(maximumHeuristicLifetime: 10)).action == .revalidate(staleIfError: false))
    }
}
