@testable import CourierCaching
@testable import CourierCore
import Courier
import Foundation
import Testing

private let identity: RequestBuilder = { $0 }

/// The cache over the in-memory transport, on a clock the test moves: what RFC 9111 says a
/// cache must do, case by case.
@Suite("HTTP cache: freshness, validation, Vary, invalidation, failures")
struct HTTPCacheTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    /// An origin whose answer for each path a test sets, counting what reaches it.
    final class Origin: Sendable {
        let answers = Locked<[String: @Sendable (Request) -> Stub]>([:])
        let seen = Locked<[Request]>([])

        func answer(_ path: String, _ make: @escaping @Sendable (Request) -> Stub) { answers.withLock { $0[path] = make } }
        var hits: Int { seen.withLock { $0.count } }
        var last: Request? { seen.withLock { $0.last } }

        var transport: InMemoryExecutor {
            InMemoryExecutor { request in
                self.seen.withLock { $0.append(request) }
                guard let make = self.answers.withLock({ $0[request.path] }) else { return .status(404) }
                return make(request)
            }
        }
    }

    let origin = Origin()
    let clock = ManualClock()

    private func executor(_ options: HTTPCache.Options = .init(), store: any HTTPCacheStore = MemoryCacheStore()) -> InMemoryExecutor {
        origin.transport.eachHop(HTTPCache(store: store, options: options, clock: clock, start: Self.start))
    }

    private func get(_ executor: some Executor, _ path: String, _ builder: RequestBuilder = identity) async throws -> Response {
        try await executor.send(.get |> url("https://api.test" + path) |> builder)
    }

    @Test func aFreshResponseIsServedWithoutTheNetworkWithItsAge() async throws {
        origin.answer("/a") { _ in .status(200, headers: ["Cache-Control": "max-age=60"], body: Data("one".utf8)) }
        let cache = executor()
        let first = try await get(cache, "/a")
        #expect(first.cacheStatus == .miss && origin.hits == 1)
        clock.advance(by: .seconds(10))
        let second = try await get(cache, "/a")
        #expect(second.cacheStatus == .hit && origin.hits == 1)
        #expect(String(decoding: second.body, as: UTF8.self) == "one")
        #expect(second.headers[.age] == "10")
        clock.advance(by: .seconds(51))
        _ = try await get(cache, "/a")
        #expect(origin.hits == 2)
    }

    @Test func aHeadIsAnsweredWithTheHeadOfAFreshStoredGet() async throws {
        origin.answer("/h") { request in
            .status(200, headers: ["Cache-Control": "max-age=60", "X-Method": request.method.rawValue], body: Data("body".utf8))
        }
        let cache = executor()
        let missed = try await cache.send(.head |> url("https://api.test/h"))
        #expect(missed.cacheStatus == nil && origin.hits == 1)
        _ = try await get(cache, "/h")
        let head = try await cache.send(.head |> url("https://api.test/h"))
        #expect(head.cacheStatus == .hit && head.body.isEmpty && head.headers["X-Method"] == "GET" && origin.hits == 2)
        clock.advance(by: .seconds(61))
        _ = try await cache.send(.head |> url("https://api.test/h"))
        #expect(origin.hits == 3 && origin.last?.method == .head)
    }

    @Test func aStaleResponseIsRevalidatedAndA304RefreshesItsHeadersButNotItsLength() async throws {
        origin.answer("/v") { request in
            if request.headers[.ifNoneMatch] == "\"v1\"" {
                return .status(304, headers: ["ETag": "\"v1\"", "Cache-Control": "max-age=10", "X-Version": "2", "Content-Length": "999"])
            }
            return .status(200, headers: ["ETag": "\"v1\"", "Cache-Control": "max-age=10", "X-Version": "1"], body: Data("body".utf8))
        }
        let cache = executor()
        _ = try await get(cache, "/v")
        clock.advance(by: .seconds(20))
        let revalidated = try await get(cache, "/v")
        #expect(origin.hits == 2 && origin.last?.headers[.ifNoneMatch] == "\"v1\"")
        #expect(revalidated.cacheStatus == .revalidated)
        #expect(revalidated.status == 200 && String(decoding: revalidated.body, as: UTF8.self) == "body")
        #expect(revalidated.headers["X-Version"] == "2" && revalidated.headers[.contentLength] == "4")
        // Fresh again for ten seconds.
        clock.advance(by: .seconds(5))
        #expect(try await get(cache, "/v").cacheStatus == .hit)
        #expect(origin.hits == 2)
    }

    @Test func a304ForAnotherRepresentationFreshensNothingAndTheCacheAsksAgain() async throws {
        let version = Locked(1)
        origin.answer("/t") { request in
            let current = version.withLock { $0 }
            if request.headers[.ifNoneMatch] != nil { return .status(304, headers: ["ETag": "\"v\(current)\""]) }
            return .status(200, headers: ["ETag": "\"v\(current)\"", "Cache-Control": "max-age=10"], body: Data("v\(current)".utf8))
        }
        let cache = executor()
        _ = try await get(cache, "/t")
        version.withLock { $0 = 2 }
        clock.advance(by: .seconds(20))
        let answer = try await get(cache, "/t")
        #expect(String(decoding: answer.body, as: UTF8.self) == "v2" && answer.cacheStatus == .miss)
        #expect(origin.hits == 3 && origin.last?.headers[.ifNoneMatch] == nil)
    }

    @Test func lastModifiedIsAValidatorAndGivesHeuristicFreshness() async throws {
        let modified = HTTPDate.format(Self.start.addingTimeInterval(-20 * 86_400))
        origin.answer("/h") { request in
            request.headers[.ifModifiedSince] == modified ? .status(304) : .status(200, headers: ["Last-Modified": modified], body: Data("h".utf8))
        }
        let cache = executor()
        _ = try await get(cache, "/h")
        clock.advance(by: .seconds(86_000))
        #expect(try await get(cache, "/h").cacheStatus == .hit)
        clock.advance(by: .seconds(1_000))
        #expect(try await get(cache, "/h").cacheStatus == .revalidated)
        #expect(origin.hits == 2)
    }

    @Test(arguments: [
        "no-store", "max-age=60, no-store", "private, max-age=60; shared", "max-age=60; authorization", "; vary-star", "",
    ])
    func whatMayNotBeStoredIsNot(rule: String) async throws {
        let parts = rule.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        let control = parts.first ?? ""
        let shared = parts.contains("shared") || parts.contains("authorization")
        origin.answer("/n") { _ in
            var headers: HTTPHeaders = [:]
            if !control.isEmpty { headers.set(.cacheControl, control) }
            if parts.contains("vary-star") { headers.set(.vary, "*"); headers.set(.cacheControl, "max-age=60") }
            return .status(200, headers: headers, body: Data("n".utf8))
        }
        let cache = executor(.init(mode: shared ? .shared : .private))
        let builder: RequestBuilder = parts.contains("authorization") ? bearer("T0KEN") : identity
        _ = try await get(cache, "/n", builder)
        let again = try await get(cache, "/n", builder)
        #expect(again.cacheStatus == .miss && origin.hits == 2, "\(rule)")
    }

    @Test func aSharedCacheStoresAnAuthorizedResponseThatSaysItMay() async throws {
        origin.answer("/p") { _ in .status(200, headers: ["Cache-Control": "public, max-age=60"], body: Data("p".utf8)) }
        let cache = executor(.init(mode: .shared))
        _ = try await get(cache, "/p", bearer("T0KEN"))
        #expect(try await get(cache, "/p", bearer("T0KEN")).cacheStatus == .hit)
    }

    @Test func sMaxAgeIsForSharedCachesOnly() async throws {
        origin.answer("/s") { _ in .status(200, headers: ["Cache-Control": "max-age=0, s-maxage=60"], body: Data()) }
        let shared = executor(.init(mode: .shared))
        _ = try await get(shared, "/s")
        #expect(try await get(shared, "/s").cacheStatus == .hit)
        let own = executor()
        _ = try await get(own, "/s")
        #expect(try await get(own, "/s").cacheStatus == .miss)
    }

    @Test func aResponseIsReusedOnlyForTheRequestFieldsItVariesOn() async throws {
        origin.answer("/l") { request in
            .status(200, headers: ["Cache-Control": "max-age=60", "Vary": "Accept-Language"], body: Data((request.headers[.acceptLanguage] ?? "-").utf8))
        }
        let cache = executor()
        _ = try await get(cache, "/l", header("Accept-Language", "en,  fr"))
        let same = try await get(cache, "/l", header("Accept-Language", "en, fr"))
        #expect(same.cacheStatus == .hit && String(decoding: same.body, as: UTF8.self) == "en,  fr")
        let other = try await get(cache, "/l", header("Accept-Language", "de"))
        #expect(other.cacheStatus == .miss && String(decoding: other.body, as: UTF8.self) == "de")
        let none = try await get(cache, "/l")
        #expect(none.cacheStatus == .miss)
        // Both variants are kept.
        #expect(try await get(cache, "/l", header("Accept-Language", "en, fr")).cacheStatus == .hit)
        #expect(try await get(cache, "/l", header("Accept-Language", "de")).cacheStatus == .hit)
    }

    @Test func theRequestsOwnCacheControlIsHonoured() async throws {
        origin.answer("/r") { _ in .status(200, headers: ["Cache-Control": "max-age=60", "ETag": "\"r\""], body: Data("r".utf8)) }
        let cache = executor()
        #expect(try await get(cache, "/r", header("Cache-Control", "only-if-cached")).status == 504)
        _ = try await get(cache, "/r")
        #expect(try await get(cache, "/r", header("Cache-Control", "only-if-cached")).cacheStatus == .hit)
        _ = try await get(cache, "/r", header("Cache-Control", "no-cache"))
        #expect(origin.hits == 2 && origin.last?.headers[.ifNoneMatch] == "\"r\"")
        _ = try await get(cache, "/r", header("Pragma", "no-cache"))
        #expect(origin.hits == 3)
        clock.advance(by: .seconds(30))
        _ = try await get(cache, "/r", header("Cache-Control", "max-age=10"))
        #expect(origin.hits == 4)
        #expect(try await get(cache, "/r", header("Cache-Control", "min-fresh=70")).cacheStatus != .hit)
        clock.advance(by: .seconds(100))
        let stale = try await get(cache, "/r", header("Cache-Control", "max-stale=200"))
        #expect(stale.cacheStatus == .stale && origin.hits == 5)
    }

    @Test func anUnsafeRequestRemovesWhatItChangedAndWhatItPointsAt() async throws {
        origin.answer("/item") { _ in .status(200, headers: ["Cache-Control": "max-age=600"], body: Data("i".utf8)) }
        origin.answer("/other") { _ in .status(200, headers: ["Cache-Control": "max-age=600"], body: Data("o".utf8)) }
        origin.answer("/elsewhere") { _ in .status(200, headers: ["Cache-Control": "max-age=600"], body: Data("e".utf8)) }
        let cache = executor()
        for path in ["/item", "/other", "/elsewhere"] { _ = try await get(cache, path) }
        #expect(origin.hits == 3)
        let post = InMemoryExecutor(routes: [.init(.post, "/item", .status(201, headers: ["Location": "/other", "Content-Location": "https://evil.test/elsewhere"]))])
        let writer = post.eachHop(HTTPCache(store: (cache.exchange.hopMiddleware[0] as? HTTPCache)!.store, clock: clock, start: Self.start))
        _ = try await writer.send(.post |> url("https://api.test/item"))
        #expect(try await get(cache, "/item").cacheStatus == .miss)
        #expect(try await get(cache, "/other").cacheStatus == .miss)
        #expect(try await get(cache, "/elsewhere").cacheStatus == .hit)
    }

    @Test func aStaleResponseAnswersForAFailingOriginWhenItAllows() async throws {
        origin.answer("/e") { _ in .status(200, headers: ["Cache-Control": "max-age=10, stale-if-error=100"], body: Data("e".utf8)) }
        let cache = executor()
        _ = try await get(cache, "/e")
        clock.advance(by: .seconds(50))
        origin.answer("/e") { _ in .status(503) }
        let served = try await get(cache, "/e")
        #expect(served.status == 200 && served.cacheStatus == .stale)
        origin.answer("/e") { _ in .failure(URLError(.notConnectedToInternet)) }
        #expect(try await get(cache, "/e").cacheStatus == .stale)
        clock.advance(by: .seconds(100))
        await #expect(throws: CourierError.self) { try await get(cache, "/e") }
    }

    @Test func withinStaleWhileRevalidateAStaleResponseAnswersAtOnceAndIsRevalidatedInTheBackground() async throws {
        origin.answer("/w") { request in
            if request.headers[.ifNoneMatch] == "\"w\"" { return .status(304, headers: ["ETag": "\"w\"", "Cache-Control": "max-age=10, stale-while-revalidate=60"]) }
            return .status(200, headers: ["ETag": "\"w\"", "Cache-Control": "max-age=10, stale-while-revalidate=60"], body: Data("w".utf8))
        }
        let transport = origin.transport
        let cache = transport.eachHop(
            HTTPCache(clock: clock, start: Self.start, backgroundRevalidation: transport))
        _ = try await cache.send(.get |> url("https://api.test/w"))
        clock.advance(by: .seconds(30))
        let stale = try await cache.send(.get |> url("https://api.test/w"))
        #expect(stale.cacheStatus == .stale && String(decoding: stale.body, as: UTF8.self) == "w")
        // The next lookup waits for the background revalidation, which freshened the entry.
        let fresh = try await cache.send(.get |> url("https://api.test/w"))
        #expect(fresh.cacheStatus == .hit)
        #expect(origin.hits == 2 && origin.last?.headers[.ifNoneMatch] == "\"w\"")
        // Past the window: revalidated in the call.
        clock.advance(by: .seconds(200))
        #expect(try await cache.send(.get |> url("https://api.test/w")).cacheStatus == .revalidated)
    }

    @Test func offlineAStoredResponseAnswersHoweverStaleButNotForAMustRevalidate() async throws {
        origin.answer("/o") { _ in .status(200, headers: ["Cache-Control": "max-age=1"], body: Data("o".utf8)) }
        let cache = executor(.init(servesStaleWhenOffline: true))
        _ = try await get(cache, "/o")
        clock.advance(by: .seconds(86_400 * 30))
        origin.answer("/o") { _ in .failure(URLError(.notConnectedToInternet)) }
        let offline = try await get(cache, "/o")
        #expect(offline.cacheStatus == .stale && String(decoding: offline.body, as: UTF8.self) == "o")
        origin.answer("/m") { _ in .status(200, headers: ["Cache-Control": "max-age=1, must-revalidate, stale-if-error=999"], body: Data()) }
        _ = try await get(cache, "/m")
        clock.advance(by: .seconds(10))
        origin.answer("/m") { _ in .status(500) }
        #expect(try await get(cache, "/m").status == 500)
        origin.answer("/m") { _ in .failure(URLError(.notConnectedToInternet)) }
        await #expect(throws: CourierError.self) { try await get(cache, "/m") }
    }

    @Test func anInvalidExpiresIsAlreadyStaleAndAValidOneCounts() async throws {
        origin.answer("/x0") { _ in .status(200, headers: ["Expires": "0"], body: Data()) }
        origin.answer("/x1") { _ in .status(200, headers: ["Expires": HTTPDate.format(Self.start.addingTimeInterval(60))], body: Data()) }
        let cache = executor()
        _ = try await get(cache, "/x0")
        #expect(try await get(cache, "/x0").cacheStatus == .miss)
        _ = try await get(cache, "/x1")
        #expect(try await get(cache, "/x1").cacheStatus == .hit)
    }

    @Test func aStreamedBodyIsStoredOnlyWhenReadToItsEnd() async throws {
        origin.answer("/big") { _ in .stream([Data("ab".utf8), Data("cd".utf8)], headers: ["Cache-Control": "max-age=60"]) }
        let cache = executor()
        let streamed = try await cache.stream(.get |> url("https://api.test/big"))
        #expect(try await streamed.collect(upTo: 100).body == Data("abcd".utf8))
        let hit = try await cache.stream(.get |> url("https://api.test/big"))
        #expect(hit.cacheStatus == .hit)
        #expect(try await hit.collect(upTo: 100).body == Data("abcd".utf8))

        origin.answer("/cut") { _ in Stub.stream([Data("ab".utf8), Data("cd".utf8)], headers: ["Cache-Control": "max-age=60"]).failing(afterBytes: 3) }
        await #expect(throws: CourierError.self) { try await get(cache, "/cut") }
        origin.answer("/left") { _ in .stream([Data("ab".utf8), Data("cd".utf8)], headers: ["Cache-Control": "max-age=60"]) }
        let left = try await cache.stream(.get |> url("https://api.test/left"))
        var iterator = left.body.makeAsyncIterator()
        _ = try await iterator.next()
        left.body.cancel()
        await #expect(throws: CourierError.self) { try await get(cache, "/cut") }
        #expect(try await get(cache, "/left").cacheStatus == .miss)
    }

    @Test func aDownloadIsStoredAndAnsweredFromTheCache() async throws {
        origin.answer("/file") { _ in .stream([Data("file ".utf8), Data("body".utf8)], headers: ["Cache-Control": "max-age=60"]) }
        let cache = executor()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-cache-download-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for name in ["one", "two"] {
            let target = directory.appendingPathComponent(name)
            _ = try await cache.download(.get |> url("https://api.test/file"), to: target)
            #expect(try Data(contentsOf: target) == Data("file body".utf8))
        }
        #expect(origin.hits == 1)
    }

    @Test func aReplayAnswersThroughTheCacheToo() async throws {
        let recorder = HARRecorder(bodies: .verbatim)
        origin.answer("/r") { _ in .status(200, headers: ["Cache-Control": "max-age=60"], body: Data("recorded".utf8)) }
        _ = try await origin.transport.with(recorder).send(.get |> url("https://api.test/r"))
        let replay = HARReplayExecutor(recorder.har)
        let cached = replay.with(HTTPCache(clock: clock, start: Self.start))
        _ = try await cached.send(.get |> url("https://api.test/r"))
        let hit = try await cached.send(.get |> url("https://api.test/r"))
        #expect(hit.cacheStatus == .hit && String(decoding: hit.body, as: UTF8.self) == "recorded")
    }

    @Test func aBodyOverTheEntryLimitPassesThroughUnstored() async throws {
        origin.answer("/large") { _ in .status(200, headers: ["Cache-Control": "max-age=60"], body: Data(count: 2_000)) }
        let cache = executor(.init(maximumEntrySize: 1_000))
        #expect(try await get(cache, "/large").body.count == 2_000)
        #expect(try await get(cache, "/large").cacheStatus == .miss)
    }

    @Test func aStoredResponseHasNoEncodingCookieOrConnectionFields() async throws {
        origin.answer("/g") { _ in
            .status(200, headers: ["Cache-Control": "max-age=60", "Content-Encoding": "gzip", "Set-Cookie": "s=1", "Connection": "close, X-Hop", "X-Hop": "1", "X-Kept": "1"], body: Data("plain".utf8))
        }
        let cache = executor()
        _ = try await get(cache, "/g")
        let hit = try await get(cache, "/g")
        #expect(hit.cacheStatus == .hit)
        #expect(hit.headers[.contentEncoding] == nil && hit.headers[.setCookie] == nil && hit.headers["X-Hop"] == nil)
        #expect(hit.headers["X-Kept"] == "1" && hit.headers[.contentLength] == "5")
    }

    // MARK: What a new user and an independent suite found (RFC 9111, by rule)

    /// A `200` with only an `ETag`, or with `no-cache`, has no freshness but a validator: it is
    /// stored, and the next request revalidates it instead of fetching it whole. Before, neither
    /// was stored, and an app that looked cached was not.
    @Test(arguments: [[:], ["Cache-Control": "no-cache"]] as [HTTPHeaders])
    func aResponseWithAValidatorAndNoFreshnessIsStoredAndRevalidated(extra: HTTPHeaders) async throws {
        origin.answer("/v") { request in
            if request.headers[.ifNoneMatch] == "\"v1\"" { return .status(304, headers: ["ETag": "\"v1\""]) }
            var headers = extra
            headers.set(.eTag, "\"v1\"")
            return .status(200, headers: headers, body: Data("body".utf8))
        }
        let cache = executor()
        let first = try await get(cache, "/v")
        #expect(first.cacheStatus == .miss && first.headers[.cacheStatus]?.contains("stored") == true)
        let second = try await get(cache, "/v")
        #expect(second.cacheStatus == .revalidated)
        #expect(String(decoding: second.body, as: UTF8.self) == "body")
        #expect(origin.last?.headers[.ifNoneMatch] == "\"v1\"")
    }

    @Test func aResponseWithNeitherFreshnessNorValidatorIsNotStored() async throws {
        origin.answer("/plain") { _ in .status(200, body: Data("p".utf8)) }
        let cache = executor()
        _ = try await get(cache, "/plain")
        let again = try await get(cache, "/plain")
        #expect(again.cacheStatus == .miss && origin.hits == 2)
        #expect(again.headers[.cacheStatus]?.contains("stored") != true)
    }

    /// A caller's own `If-None-Match` or `If-Modified-Since`, against a fresh stored response:
    /// answered by the cache, `304` when the caller's copy is current and the stored `200`
    /// otherwise (RFC 9111 §4.3.2). Before, every conditional request went to the origin.
    @Test func aCallersConditionalRequestIsAnsweredFromAFreshStoredResponse() async throws {
        let modified = HTTPDate.format(Self.start.addingTimeInterval(-3_600))
        origin.answer("/c") { _ in .status(200, headers: ["Cache-Control": "max-age=60", "ETag": "W/\"c1\"", "Last-Modified": modified], body: Data("c".utf8)) }
        let cache = executor()
        _ = try await get(cache, "/c")
        let current = try await get(cache, "/c", header("If-None-Match", "\"x\", \"c1\""))
        #expect(current.status == 304 && current.body.isEmpty && current.cacheStatus == .hit)
        #expect(current.headers[.eTag] == "W/\"c1\"" && current.headers[.cacheControl] == "max-age=60")
        let other = try await get(cache, "/c", header("If-None-Match", "\"c2\""))
        #expect(other.status == 200 && String(decoding: other.body, as: UTF8.self) == "c")
        let since = try await get(cache, "/c", header("If-Modified-Since", modified))
        #expect(since.status == 304)
        let before = try await get(cache, "/c", header("If-Modified-Since", HTTPDate.format(Self.start.addingTimeInterval(-7_200))))
        #expect(before.status == 200)
        #expect(origin.hits == 1)
        // Stale: the caller's conditions go to the origin as they are.
        clock.advance(by: .seconds(61))
        _ = try? await get(cache, "/c", header("If-None-Match", "\"c1\""))
        #expect(origin.hits == 2 && origin.last?.headers[.ifNoneMatch] == "\"c1\"")
    }

    /// RFC 9211: a stale stored response the origin replaced on revalidation was forwarded as
    /// stale, not as a miss.
    @Test func aStaleResponseReplacedOnRevalidationSaysFwdStale() async throws {
        let version = Locked(1)
        origin.answer("/r") { _ in
            let current = version.withLock { $0 }
            return .status(200, headers: ["Cache-Control": "max-age=10", "ETag": "\"v\(current)\""], body: Data("v\(current)".utf8))
        }
        let cache = executor()
        _ = try await get(cache, "/r")
        version.withLock { $0 = 2 }
        clock.advance(by: .seconds(11))
        let replaced = try await get(cache, "/r")
        #expect(String(decoding: replaced.body, as: UTF8.self) == "v2")
        #expect(replaced.headers[.cacheStatus]?.contains("fwd=stale; fwd-status=200") == true)
        #expect(replaced.cacheStatus == .miss)
    }

    /// `stale-if-error` on a response with no freshness of its own: stored (something may serve
    /// it stale), then served for a 503 and for a connection that closed.
    @Test func staleIfErrorServesAResponseWithNoFreshnessOfItsOwn() async throws {
        let failure = Locked<Stub?>(nil)
        origin.answer("/s") { _ in failure.withLock { $0 } ?? .status(200, headers: ["Cache-Control": "stale-if-error=600"], body: Data("s".utf8)) }
        let cache = executor()
        _ = try await get(cache, "/s")
        failure.withLock { $0 = .status(503) }
        let for503 = try await get(cache, "/s")
        #expect(for503.status == 200 && for503.cacheStatus == .stale)
        failure.withLock { $0 = .failure(URLError(.networkConnectionLost)) }
        let forClosed = try await get(cache, "/s")
        #expect(forClosed.status == 200 && forClosed.cacheStatus == .stale)
    }

    /// A coding no transport undoes stays on the stored response: its body is still encoded.
    @Test func anUnknownContentEncodingIsKept() async throws {
        origin.answer("/x") { _ in .status(200, headers: ["Cache-Control": "max-age=60", "Content-Encoding": "x-custom"], body: Data("raw".utf8)) }
        let cache = executor()
        _ = try await get(cache, "/x")
        let hit = try await get(cache, "/x")
        #expect(hit.cacheStatus == .hit && hit.headers[.contentEncoding] == "x-custom")
        #expect(HTTPCache.wasDecoded(["gzip"]) && HTTPCache.wasDecoded(["GZIP, br"]) && !HTTPCache.wasDecoded(["gzip, x-custom"]))
    }

    /// A single byte range is cut from a fresh stored complete response (RFC 9111 §3.4 lets a
    /// cache answer a range from what it holds): a 206 with `Content-Range`, a 416 when the range
    /// selects nothing, the whole response when `If-Range` names another version. Before, every
    /// range went to the origin.
    @Test func aRangeIsServedFromAFreshStoredCompleteResponse() async throws {
        origin.answer("/file") { _ in
            .status(200, headers: ["Cache-Control": "max-age=60", "ETag": "\"f1\"", "Content-Type": "text/plain"], body: Data("0123456789".utf8))
        }
        let cache = executor()
        _ = try await get(cache, "/file")
        let middle = try await get(cache, "/file", header("Range", "bytes=2-5"))
        #expect(middle.status == 206 && String(decoding: middle.body, as: UTF8.self) == "2345")
        #expect(middle.headers[.contentRange] == "bytes 2-5/10" && middle.headers[.contentLength] == "4" && middle.cacheStatus == .hit)
        #expect(String(decoding: try await get(cache, "/file", header("Range", "bytes=7-")).body, as: UTF8.self) == "789")
        #expect(String(decoding: try await get(cache, "/file", header("Range", "bytes=-3")).body, as: UTF8.self) == "789")
        #expect(String(decoding: try await get(cache, "/file", header("Range", "bytes=8-100")).body, as: UTF8.self) == "89")
        let beyond = try await get(cache, "/file", header("Range", "bytes=10-"))
        #expect(beyond.status == 416 && beyond.headers[.contentRange] == "bytes */10")
        let sameVersion = try await get(cache, "/file", header("Range", "bytes=0-0") <> header("If-Range", "\"f1\""))
        #expect(sameVersion.status == 206 && String(decoding: sameVersion.body, as: UTF8.self) == "0")
        let otherVersion = try await get(cache, "/file", header("Range", "bytes=0-0") <> header("If-Range", "\"f0\""))
        #expect(otherVersion.status == 200 && otherVersion.body.count == 10)
        #expect(origin.hits == 1)
        // Several ranges go to the origin as they are.
        _ = try await get(cache, "/file", header("Range", "bytes=0-1, 4-5"))
        #expect(origin.hits == 2 && origin.last?.headers[.range] == "bytes=0-1, 4-5")
    }

    @Test(arguments: [
        ("bytes=0-99", 0, 99, nil), ("BYTES = 5-", 5, nil, nil), ("bytes=-20", nil, nil, 20),
    ] as [(String, Int?, Int?, Int?)])
    func aSingleByteRangeIsRead(field: String, first: Int?, last: Int?, suffix: Int?) throws {
        let range = try #require(ByteRange(field))
        #expect(range.first == first && range.last == last && range.suffixLength == suffix)
    }

    @Test(arguments: ["bytes=5-2", "bytes=0-1,3-4", "items=0-5", "bytes=-", "bytes=a-b", "bytes=1.5-2", "bytes", ""])
    func whatIsNotOneByteRangeIsNotRead(field: String) {
        #expect(ByteRange(field) == nil)
    }

    /// RFC 9111 §4.2.2: a response marked `public`, with a `Last-Modified` and no lifetime of its
    /// own, gets heuristic freshness even with a status that is not heuristically cacheable.
    @Test func aPublicResponseGetsHeuristicFreshness() async throws {
        let modified = HTTPDate.format(Self.start.addingTimeInterval(-10 * 86_400))
        origin.answer("/p") { _ in .status(302, headers: ["Cache-Control": "public", "Last-Modified": modified, "Location": "/elsewhere"]) }
        var refusing = origin.transport
        refusing.redirects = .refuse
        let cache = refusing.eachHop(HTTPCache(clock: clock, start: Self.start))
        _ = try await cache.send(.get |> url("https://api.test/p"))
        clock.advance(by: .seconds(3_600))
        let again = try await cache.send(.get |> url("https://api.test/p"))
        #expect(again.status == 302 && again.cacheStatus == .hit && origin.hits == 1)
    }

    /// A response that arrives with `Age: 100` is served 10 s later with `Age: 110`: the age it
    /// had plus the time it spent stored (RFC 9111 §4.2.3). The stored copy used to drop the
    /// field, so it was served as 10 s old, and stayed fresh 100 s too long.
    @Test func theAgeAResponseArrivedWithCountsWithTheTimeItSpentStored() async throws {
        origin.answer("/aged") { _ in .status(200, headers: ["Cache-Control": "max-age=3600", "Age": "100"], body: Data("a".utf8)) }
        let cache = executor()
        _ = try await get(cache, "/aged")
        clock.advance(by: .seconds(10))
        let hit = try await get(cache, "/aged")
        #expect(hit.cacheStatus == .hit && hit.headers[.age] == "110")
        clock.advance(by: .seconds(3_490))
        #expect(try await get(cache, "/aged").cacheStatus != .hit)
    }

    // MARK: The last cases of the independent suites

    /// A `304` updates every stored field it carries: a coding the stored body still has, the
    /// `ETag` in its strong form, a field of its own. Its `Set-Cookie` reaches the caller (a
    /// session refreshed on a revalidation) and is never served from the store. Before, the
    /// `Content-Encoding` stayed the old one and the cookie was lost.
    @Test func a304UpdatesTheStoredCodingAndTagAndItsCookieReachesTheCaller() async throws {
        origin.answer("/u") { request in
            if request.headers[.ifNoneMatch] == "W/\"u1\"" {
                return .status(304, headers: ["ETag": "\"u1\"", "Cache-Control": "max-age=60", "Content-Encoding": "x-b", "Set-Cookie": "session=2", "X-Field": "B"])
            }
            return .status(200, headers: ["ETag": "W/\"u1\"", "Cache-Control": "max-age=1", "Content-Encoding": "x-a", "Set-Cookie": "session=1", "X-Field": "A"], body: Data("coded".utf8))
        }
        let cache = executor()
        _ = try await get(cache, "/u")
        clock.advance(by: .seconds(3))
        let validated = try await get(cache, "/u")
        #expect(validated.cacheStatus == .revalidated && origin.hits == 2)
        #expect(validated.headers[.contentEncoding] == "x-b" && validated.headers[.eTag] == "\"u1\"" && validated.headers["X-Field"] == "B")
        #expect(validated.headers.values(for: .setCookie) == ["session=2"])
        #expect(String(decoding: validated.body, as: UTF8.self) == "coded")
        let hit = try await get(cache, "/u")
        #expect(hit.cacheStatus == .hit && origin.hits == 2)
        #expect(hit.headers[.contentEncoding] == "x-b" && hit.headers[.eTag] == "\"u1\"" && hit.headers["X-Field"] == "B")
        #expect(hit.headers[.setCookie] == nil)
    }

    /// A body held plain (decoded on arrival) is never relabelled by a `304` naming a coding: the
    /// bytes held are not in it.
    @Test func a304NamingACodingLeavesAPlainStoredBodyPlain() async throws {
        origin.answer("/p") { request in
            if request.headers[.ifNoneMatch] == "\"p\"" { return .status(304, headers: ["ETag": "\"p\"", "Content-Encoding": "x-other"]) }
            return .status(200, headers: ["ETag": "\"p\"", "Cache-Control": "max-age=1", "Content-Encoding": "gzip"], body: Data("plain".utf8))
        }
        let cache = executor()
        _ = try await get(cache, "/p")
        clock.advance(by: .seconds(3))
        let validated = try await get(cache, "/p")
        #expect(validated.cacheStatus == .revalidated && validated.headers[.contentEncoding] == nil)
    }

    /// `Last-Modified` 30 s before `Date`: fresh for 6 s by heuristics (20%, as Squid), so a
    /// request 3 s later is a hit; 10% (browsers) made it stale just then. The fraction is an
    /// option, and a fraction that is not finite or out of range is read sanely.
    @Test func aResponseModified30SecondsAgoIsFreshForAFewSecondsByHeuristics() async throws {
        let modified = HTTPDate.format(Self.start.addingTimeInterval(-30))
        let date = HTTPDate.format(Self.start)
        origin.answer("/h30") { _ in .status(200, headers: ["Last-Modified": modified, "Date": date], body: Data("h".utf8)) }
        let cache = executor()
        _ = try await get(cache, "/h30")
        clock.advance(by: .seconds(3))
        #expect(try await get(cache, "/h30").cacheStatus == .hit)
        clock.advance(by: .seconds(3))
        #expect(try await get(cache, "/h30").cacheStatus != .hit)
        #expect(HTTPCache.Options(heuristicFraction: .nan).heuristicShare == 0.2)
        #expect(HTTPCache.Options(heuristicFraction: -1).heuristicShare == 0 && HTTPCache.Options(heuristicFraction: 7).heuristicShare == 1)
        let browserLike = origin.transport.eachHop(HTTPCache(options: .init(heuristicFraction: 0.1), clock: clock, start: Self.start.addingTimeInterval(6)))
        _ = try await get(browserLike, "/h30")
        clock.advance(by: .seconds(3))
        #expect(try await get(browserLike, "/h30").cacheStatus != .hit)
    }

    /// `no-cache="X-Secret"` lets the rest of a response be reused and keeps the named field out
    /// of the store (RFC 9111 §5.2.2.4); `private="X-User"` does the same in a shared cache.
    /// Before, a qualified `no-cache` revalidated every time and a qualified `private` was not
    /// stored by a shared cache at all.
    @Test func qualifiedNoCacheAndPrivateWithholdOnlyTheFieldsTheyName() async throws {
        origin.answer("/q") { _ in
            .status(200, headers: ["Cache-Control": "max-age=60, no-cache=\"X-Secret\", private=\"X-User\"", "X-Secret": "s", "X-User": "u", "X-Kept": "k"], body: Data("q".utf8))
        }
        let cache = executor()
        let first = try await get(cache, "/q")
        #expect(first.headers["X-Secret"] == "s")
        let hit = try await get(cache, "/q")
        #expect(hit.cacheStatus == .hit && origin.hits == 1)
        #expect(hit.headers["X-Secret"] == nil && hit.headers["X-User"] == "u" && hit.headers["X-Kept"] == "k")
        let shared = origin.transport.eachHop(HTTPCache(options: .init(mode: .shared), clock: clock, start: Self.start))
        _ = try await get(shared, "/q")
        let sharedHit = try await get(shared, "/q")
        #expect(sharedHit.cacheStatus == .hit && sharedHit.headers["X-User"] == nil && sharedHit.headers["X-Secret"] == nil)
        let control = CacheControl(["no-cache=\"A, b\", private"])
        #expect(!control.noCache && control.noCacheFields == ["a", "b"] && control.isPrivate && control.privateFields.isEmpty)
    }

    /// `Age: 7200.0` on a response fresh for an hour: read as at least 7,200 s, so it is stale.
    @Test func aMalformedAgeDoesNotMakeAResponseFresher() async throws {
        origin.answer("/age") { _ in .status(200, headers: ["Cache-Control": "max-age=3600", "Age": "7200.0"], body: Data("a".utf8)) }
        let cache = executor()
        _ = try await get(cache, "/age")
        let again = try await get(cache, "/age")
        #expect(again.cacheStatus != .hit && origin.hits == 2)
    }
}

@Suite("HTTP cache: Cache-Control and the memory store")
struct CacheControlTests {
    @Test func directivesAreReadCaseInsensitivelyWithQuotedValues() {
        let control = CacheControl([#"Max-Age=60, no-cache="Set-Cookie, X-Foo", PRIVATE"#, "s-maxage=\"30\", immutable"])
        #expect(control.maxAge == 60 && control.sharedMaxAge == 30)
        #expect(!control.noCache && control.noCacheFields == ["set-cookie", "x-foo"] && control.isPrivate && control.immutable)
        #expect(!control.noStore && !control.isPublic)
    }

    @Test func aCommaFollowedByACombiningMarkStillSeparatesDirectives() {
        let control = CacheControl(["max-age=60,\u{301} no-store", "private=\"a,\u{301}b\", public"])
        #expect(control.maxAge == 60 && control.isPublic && control.privateFields.count == 2 && !control.noStore)
    }

    @Test(arguments: ["max-age=abc", "max-age=-1", "max-age=1.5", "max-age=60s", "max-age=100a", "max-age=5.0", "max-age=0.0", "max-age=", "max-age =60", "max-age= 60x", "max-age='60'"])
    func aMalformedAgeReadsAsStale(field: String) {
        #expect(CacheControl([field]).maxAge == 0)
    }

    /// A directive given twice counts as its first occurrence (RFC 9111 §4.2.1), on one line or
    /// two.
    @Test func aRepeatedDirectiveCountsAsItsFirst() {
        #expect(CacheControl(["max-age=60, max-age=120"]).maxAge == 60)
        #expect(CacheControl(["max-age=120", "max-age=60"]).maxAge == 120)
        #expect(CacheControl(["max-age=1.5, max-age=60"]).maxAge == 0)
    }

    /// `Age` (RFC 9111 §5.1): the first member of a list; a malformed value read as at least the
    /// whole seconds it starts with, never as younger; one with no leading digit ignored.
    @Test(arguments: [("7200", 7200), ("7200.0", 7200), ("7200s", 7200), ("7200, 0", 7200), (" 30 ", 30), ("abc", nil), ("-7200", nil), ("", nil)] as [(String, Int?)])
    func anAgeFieldIsReadCautiously(field: String, seconds: Int?) {
        #expect(CacheDecision.ageSeconds(field) == seconds)
    }

    @Test func aHugeAgeSaturates() {
        #expect(CacheControl(["max-age=99999999999999999999999"]).maxAge == Int.max)
        #expect(CacheControl(["max-stale"]).maxStale == Int.max)
    }

    @Test func theMemoryStoreEvictsTheLeastRecentlyUsedURLToStayUnderItsSize() async {
        let store = MemoryCacheStore(maximumSize: 1_000)
        func entry(_ url: String, _ size: Int) -> CachedResponse {
            CachedResponse(url: url, status: 200, headers: [:], body: Data(count: size), varied: [:], requestTime: Date(), responseTime: Date())
        }
        await store.store(entry("a", 300))
        await store.store(entry("b", 300))
        _ = await store.responses(for: "a")
        await store.store(entry("c", 300))
        #expect(await store.responses(for: "b").isEmpty)
        #expect(await !store.responses(for: "a").isEmpty)
        #expect(await !store.responses(for: "c").isEmpty)
        await store.store(entry("huge", 5_000))
        #expect(await store.responses(for: "huge").isEmpty)
        #expect(store.size <= 1_000)
    }
}
