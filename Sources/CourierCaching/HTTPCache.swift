import CourierCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An HTTP cache ([RFC 9111](https://www.rfc-editor.org/rfc/rfc9111)) as middleware: the same on
/// URLSession, AsyncHTTPClient, the in-memory executor and a HAR replay, under `send`, `stream`
/// and `download`.
///
/// ```swift
/// let cache = HTTPCache(store: MemoryCacheStore(maximumSize: 20 << 20))
/// let executor = URLSessionExecutor().eachHop(cache)
/// let first = try await executor.send(.get |> url("https://api.example.com/users"))   // Cache-Status: fwd=miss
/// let again = try await executor.send(.get |> url("https://api.example.com/users"))   // from memory
/// let fromCache = again.cacheStatus == .hit && first.cacheStatus == .miss
/// ```
///
/// **What it does.** A `GET` is answered from the store when a stored response for its URL
/// matches the request's `Vary` fields and is fresh (`s-maxage` in ``Mode/shared``, `max-age`,
/// `Expires`, or 20% of its age since `Last-Modified` (``Options/heuristicFraction``) when it gives none, at most a day), as the
/// request's own `Cache-Control` allows (`max-age`, `min-fresh`, `max-stale`, `no-cache`,
/// `only-if-cached`, and `Pragma: no-cache`). A stale one with a validator is revalidated with
/// `If-None-Match`/`If-Modified-Since`; a `304` refreshes its headers (not `Content-Length`) and
/// it is served. `stale-if-error` and `stale-while-revalidate` (and
/// ``Options/servesStaleWhenOffline``) serve it when the origin answers `5xx` or cannot be
/// reached. Within `stale-while-revalidate`, given an executor for `backgroundRevalidation`,
/// the stale response answers at once and is revalidated in the background; without one the
/// revalidation runs in the call (a middleware cannot outlive the call). `no-store`, `private` (shared mode), `Vary: *`, a `206` and
/// responses to requests with `Authorization` (shared mode, unless the response allows it) are
/// not stored. A `POST`, `PUT`, `DELETE` or `PATCH` answered with a `2xx`/`3xx` removes what is
/// stored for its URL and the `Location` and `Content-Location` it names (same origin).
///
/// **What it stores.** A response's headers match its body: the transport already decoded a
/// `gzip` body, so the stored copy has no `Content-Encoding` and its own `Content-Length`;
/// `Set-Cookie` and connection fields are not stored. A streamed body is stored as it passes
/// through to the reader, only when it was read to its end (not cut, not over a limit, not
/// abandoned) and not longer than ``Options/maximumEntrySize``.
///
/// **Where it runs.** Around each hop (``Exchange/eachHop(_:)``): a permanent redirect is
/// cached like any response. A request with its own validators (`If-None-Match`,
/// `If-Modified-Since`) is answered from a fresh stored response (a `304` when the caller's copy
/// is current), one for a single byte `Range` with a `206` cut from a fresh stored complete
/// response; methods other than `GET` pass through; a `HEAD` is answered with the head of a
/// fresh stored `GET` response, and sent on otherwise.
///
/// Each response says where it came from (``CacheStatus``, read from the `Cache-Status` field
/// it adds, [RFC 9211](https://www.rfc-editor.org/rfc/rfc9211)), so logs and metrics see it.
public struct HTTPCache: Middleware {
    /// Whose cache this is (RFC 9111 §1).
    public enum Mode: Sendable, Hashable {
        /// One user's (the default): `private` responses are stored, `s-maxage` is ignored.
        case `private`
        /// Many users' (a proxy, a server calling on behalf of clients): `private` responses are
        /// not stored, `s-maxage` and `proxy-revalidate` apply, and a response to a request with
        /// `Authorization` is stored only when it says so (`public`, `s-maxage`, `must-revalidate`).
        case shared
    }

    /// How the cache behaves.
    public struct Options: Sendable, Hashable {
        /// Whose cache it is; ``Mode/private`` by default.
        public var mode: Mode
        /// The longest body stored, in bytes; 1 MiB by default. Longer responses pass through.
        public var maximumEntrySize: Int
        /// The most heuristic freshness given to a response with `Last-Modified` and no explicit
        /// lifetime (RFC 9111 §4.2.2), in seconds; one day by default, `0` turns heuristics off.
        public var maximumHeuristicLifetime: TimeInterval
        /// The share of a response's age at its `Date` (the time since its `Last-Modified`)
        /// that it stays fresh by heuristics (RFC 9111 §4.2.2), up to
        /// ``maximumHeuristicLifetime``: `0.2` by default, Squid's default; browsers and OkHttp
        /// use `0.1`. Read between `0` and `1`; a value that is not finite reads as the default.
        public var heuristicFraction: Double
        /// Whether a stored response, however stale, answers when the origin cannot be reached
        /// (a transport failure, not a cancellation): for apps that must show something
        /// offline. It comes with ``CacheStatus/stale``. `false` by default.
        public var servesStaleWhenOffline: Bool

        /// Creates options.
        /// - Parameters:
        ///   - mode: Whose cache it is.
        ///   - maximumEntrySize: The longest body stored; negative counts as `0`.
        ///   - maximumHeuristicLifetime: The most heuristic freshness, in seconds.
        ///   - heuristicFraction: The share of the time since `Last-Modified` a response stays
        ///     fresh by heuristics.
        ///   - servesStaleWhenOffline: Whether stale responses answer when the origin cannot
        ///     be reached.
        public init(
            mode: Mode = .private, maximumEntrySize: Int = 1 << 20, maximumHeuristicLifetime: TimeInterval = 86_400,
            heuristicFraction: Double, servesStaleWhenOffline: Bool = false
        ) {
            self.mode = mode
            self.maximumEntrySize = Swift.max(0, maximumEntrySize)
            self.maximumHeuristicLifetime = maximumHeuristicLifetime.isFinite ? Swift.max(0, maximumHeuristicLifetime) : 0
            self.heuristicFraction = heuristicFraction
            self.servesStaleWhenOffline = servesStaleWhenOffline
        }

        /// Creates options with the default ``heuristicFraction``, 20% (the initializer of
        /// 1.0.0-rc.1).
        /// - Parameters:
        ///   - mode: Whose cache it is.
        ///   - maximumEntrySize: The longest body stored; negative counts as `0`.
        ///   - maximumHeuristicLifetime: The most heuristic freshness, in seconds.
        ///   - servesStaleWhenOffline: Whether stale responses answer when the origin cannot
        ///     be reached.
        public init(
            mode: Mode = .private, maximumEntrySize: Int = 1 << 20, maximumHeuristicLifetime: TimeInterval = 86_400,
            servesStaleWhenOffline: Bool = false
        ) {
            self.init(
                mode: mode, maximumEntrySize: maximumEntrySize, maximumHeuristicLifetime: maximumHeuristicLifetime,
                heuristicFraction: 0.2, servesStaleWhenOffline: servesStaleWhenOffline)
        }

        /// ``heuristicFraction`` as the cache reads it: between `0` and `1`, the default when
        /// it is not finite.
        var heuristicShare: Double { heuristicFraction.isFinite ? Swift.min(1, Swift.max(0, heuristicFraction)) : 0.2 }
    }

    /// Where responses are kept.
    public let store: any HTTPCacheStore
    /// What revalidates a response served within its `stale-while-revalidate` window, in the
    /// background; `nil` to revalidate inside the call instead.
    public let backgroundRevalidation: (any Executor)?
    /// How the cache behaves.
    public let options: Options
    let time: WallTime
    let writes = PendingWrites()

    /// Creates a cache.
    /// - Parameters:
    ///   - store: Where responses are kept; a 10 MiB ``MemoryCacheStore`` by default.
    ///   - options: How the cache behaves.
    ///   - clock: The clock ages run on; `ContinuousClock` by default, a ``ManualClock`` in tests.
    ///   - start: The wall-clock date the clock's present stands for; now by default.
    ///   - backgroundRevalidation: The executor that revalidates, in the background, a response
    ///     served stale within its `stale-while-revalidate` window (RFC 5861): the executor
    ///     under the cache, without it. `nil` (the default) revalidates inside the call, the
    ///     stale response answering only if that fails: a middleware cannot outlive its call.
    public init(
        store: any HTTPCacheStore = MemoryCacheStore(), options: Options = Options(), clock: some Clock<Duration> = ContinuousClock(),
        start: Date = Date(), backgroundRevalidation: (any Executor)? = nil
    ) {
        self.store = store
        self.backgroundRevalidation = backgroundRevalidation
        self.options = options
        self.time = WallTime(clock: clock, start: start)
    }

    /// Answers `request` from the store, revalidates, or sends it and stores the answer.
    /// - Parameters:
    ///   - request: The request.
    ///   - next: The rest of the chain.
    /// - Returns: The response, with `Cache-Status`.
    /// - Throws: What `next` throws, unless a stale response may answer instead.
    public func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
        guard let url = request.url else { return try await next(request) }
        let key = Self.key(url)
        switch request.method {
        case .get:
            break
        case .head:
            return try await head(request, key: key, url: url, next: next)
        case .options, .trace:
            return try await next(request)
        default:
            let response = try await next(request)
            if (200..<400).contains(response.status) { await invalidate(key, after: response, url: url) }
            return response
        }
        let headers = request.headers
        if headers.contains(.range) { return try await ranged(request, key: key, next: next) }
        if headers.contains(.ifRange) { return try await next(request) }
        if headers.contains(.ifNoneMatch) || headers.contains(.ifModifiedSince) {
            return try await conditional(request, key: key, next: next)
        }
        await writes.wait(for: key)
        let entry = await storedEntry(for: request, key: key)
        let decision = CacheDecision(
            for: request, stored: entry, now: time.now, options: options, revalidatesInBackground: backgroundRevalidation != nil)
        let (age, lifetime) = (decision.age ?? 0, decision.lifetime ?? 0)
        let staleIfError: Bool
        switch decision.action {
        case .fetch:
            return try await fetch(request, key: key, next: next)
        case .unsatisfiable:
            return Self.gatewayTimeout(url)
        case .serve(let status, let detail):
            guard let entry else { return try await fetch(request, key: key, next: next) }
            return serve(entry, age: age, lifetime: lifetime, as: status, detail: detail)
        case .serveAndRevalidateInBackground:
            guard let entry, let revalidator = backgroundRevalidation else { return try await fetch(request, key: key, next: next) }
            let conditional = revalidationRequest(request, for: entry)
            writes.run(for: key) { await self.revalidate(conditional, original: request, entry: entry, key: key, via: revalidator) }
            return serve(entry, age: age, lifetime: lifetime, as: .stale, detail: "stale-while-revalidate")
        case .revalidate(let allowed):
            staleIfError = allowed
        @unknown default:
            return try await fetch(request, key: key, next: next)
        }
        guard let entry else { return try await fetch(request, key: key, next: next) }
        let said = CacheControl(entry.headers.values(for: .cacheControl))
        let fresh = lifetime > age
        let conditional = revalidationRequest(request, for: entry)
        do {
            let requestTime = time.now
            let response = try await next(conditional)
            if response.status == 304, conditional.headers != request.headers {
                response.body.cancel()
                if let tag = response.headers[.eTag], let stored = entry.headers[.eTag], Self.weakTag(tag) != Self.weakTag(stored) {
                    // A 304 for another representation than the one held (RFC 9111 §4.3.4):
                    // nothing to freshen; ask again without conditions.
                    return try await fetch(request, key: key, next: next)
                }
                let updated = Self.updated(entry, with: response.head, requestTime: requestTime, responseTime: time.now, mode: options.mode)
                await store.store(updated)
                let lifetime = freshnessLifetime(updated, said: CacheControl(updated.headers.values(for: .cacheControl)))
                var served = serve(updated, age: CacheDecision.currentAge(updated, now: time.now), lifetime: lifetime, as: .revalidated)
                // What is never stored still reaches the caller from the origin's own answer: its
                // cookies (a session refreshed on a 304) and the fields it withholds from a cache.
                let withheld = CacheControl(response.headers.values(for: .cacheControl)).noCacheFields.map { HeaderName(rawValue: $0) }
                for name in [HeaderName.setCookie] + withheld where !response.headers.values(for: name).isEmpty {
                    served.headers.remove(name)
                    for value in response.headers.values(for: name) { served.headers.add(name, value) }
                }
                return served
            }
            if (500..<600).contains(response.status), staleIfError {
                response.body.cancel()
                return serve(entry, age: age, lifetime: lifetime, as: .stale, detail: "stale-if-error")
            }
            return await kept(response, request: request, key: key, requestTime: requestTime, replacingStale: !fresh || said.noCache)
        } catch {
            // must-revalidate forbids a stale answer even offline (RFC 9111 §5.2.2.2).
            let mayServeStale = staleIfError || (options.servesStaleWhenOffline && !CacheDecision.mustRevalidate(said, options: options))
            if !Task.isCancelled, !Self.isCancellation(error), mayServeStale {
                return serve(entry, age: age, lifetime: lifetime, as: .stale, detail: "offline")
            }
            throw error
        }
    }

    /// A `GET` with the caller's own validators (`If-None-Match`, `If-Modified-Since`): answered
    /// from a fresh stored response when the request may take one (RFC 9111 §4.3.2), with a
    /// `304` when the condition says the caller's copy is current (RFC 9110 §13.2.2:
    /// `If-None-Match` by weak comparison first, `If-Modified-Since` only without it), with the
    /// stored `200` otherwise; sent on, its conditions untouched, when nothing fresh is stored.
    private func conditional(_ request: Request, key: String, next: Next) async throws -> StreamedResponse {
        let headers = request.headers
        guard let (entry, response) = await freshStoredAnswer(for: request, key: key) else { return try await next(request) }
        guard Self.isNotModified(entry, for: headers) else { return response }
        // A 304 carries the fields a 200 would have had that describe the representation and
        // its caching (RFC 9110 §15.4.5), no body.
        var kept = HTTPHeaders()
        for name in [HeaderName.cacheControl, .contentLocation, .date, .eTag, .expires, .vary, .lastModified, .age, .cacheStatus] {
            for value in response.headers.values(for: name) { kept.add(name, value) }
        }
        return StreamedResponse(status: 304, headers: kept, url: response.url, body: ByteStream(Data()))
    }

    /// The stored response that may answer `request` as it is, fresh (a hit), and that answer:
    /// none when the request asks to skip or revalidate (`no-cache`, `Pragma: no-cache`, a
    /// reloading cache policy), nothing is stored for its `Vary` fields, or the stored one is
    /// stale, `no-cache`, older than the request's `max-age` or fresh for less than its
    /// `min-fresh`.
    func freshStoredAnswer(for request: Request, key: String) async -> (CachedResponse, StreamedResponse)? {
        let headers = request.headers
        let asked = CacheControl(headers.values(for: .cacheControl))
        let pragma = !headers.contains(.cacheControl) && headers.values(for: .pragma).contains { $0.lowercased().contains("no-cache") }
        guard !asked.noCache, asked.noCacheFields.isEmpty, !pragma, request.cachePolicy != .reloadIgnoringLocalCacheData else { return nil }
        await writes.wait(for: key)
        guard let entry = await storedEntry(for: request, key: key) else { return nil }
        let said = CacheControl(entry.headers.values(for: .cacheControl))
        let age = CacheDecision.currentAge(entry, now: time.now)
        let lifetime = freshnessLifetime(entry, said: said)
        guard !said.noCache, lifetime > age, asked.maxAge.map({ age <= TimeInterval($0) || said.immutable }) ?? true,
            asked.minFresh.map({ lifetime - age >= TimeInterval($0) }) ?? true
        else { return nil }
        return (entry, serve(entry, age: age, lifetime: lifetime, as: .hit))
    }

    /// Whether `entry` is what the caller already has, by its conditions.
    static func isNotModified(_ entry: CachedResponse, for headers: HTTPHeaders) -> Bool {
        let tags = headers.values(for: .ifNoneMatch)
        if !tags.isEmpty {
            guard let stored = entry.headers[.eTag] else { return false }
            let listed = tags.flatMap { HTTPSyntax.parts(of: $0, separatedBy: UInt8(ascii: ",")) }
            return listed.contains { $0 == "*" || weakTag($0) == weakTag(stored) }
        }
        guard let since = headers[.ifModifiedSince].flatMap({ HTTPDate.parse($0) }),
            let modified = (entry.headers[.lastModified] ?? entry.headers[.date]).flatMap({ HTTPDate.parse($0) })
        else { return false }
        return modified <= since
    }

    /// A `HEAD` answered with the head of a fresh stored `GET` response (RFC 9111 §4 lets a
    /// `GET` response serve a `HEAD`), or sent on; its answer is not stored.
    private func head(_ request: Request, key: String, url: URL, next: Next) async throws -> StreamedResponse {
        guard let (_, answer) = await freshStoredAnswer(for: request, key: key) else { return try await next(request) }
        var response = answer
        response.body = ByteStream(Data())
        return response
    }

    // MARK: Sending and storing

    /// Sends `request` and stores the answer when it may be.
    private func fetch(_ request: Request, key: String, next: Next) async throws -> StreamedResponse {
        let requestTime = time.now
        let response = try await next(request)
        return await kept(response, request: request, key: key, requestTime: requestTime)
    }

    /// A revalidation in the background (`stale-while-revalidate`): a `304` for the entry
    /// freshens it, a new answer replaces it, a failure leaves it as it was.
    private func revalidate(_ conditional: Request, original: Request, entry: CachedResponse, key: String, via revalidator: any Executor) async {
        let requestTime = time.now
        guard let response = try? await revalidator.send(conditional) else { return }
        if response.status == 304 {
            if let tag = response.headers[.eTag], let stored = entry.headers[.eTag], Self.weakTag(tag) != Self.weakTag(stored) { return }
            await store.store(Self.updated(entry, with: response, requestTime: requestTime, responseTime: time.now, mode: options.mode))
        } else if response.status < 500 {
            _ = await kept(StreamedResponse(response), request: original, key: key, requestTime: requestTime)
        }
    }

    /// `response`, marked, and stored (now if its body is in hand, as it passes otherwise) when
    /// RFC 9111 §3 allows. `replacingStale`: it answered the revalidation of a stale stored
    /// response (`Cache-Status: fwd=stale`), not a miss.
    private func kept(_ response: StreamedResponse, request: Request, key: String, requestTime: Date, replacingStale: Bool = false) async
        -> StreamedResponse
    {
        var response = response
        let forwarded = replacingStale ? response.status : nil
        guard storable(response, request: request) else {
            response.headers.add(.cacheStatus, CacheStatus.miss.field(ttl: nil, replacedStale: forwarded))
            return response
        }
        let responseTime = time.now
        let varied = Self.variedFields(response.headers, request: request)
        let headers = Self.storedHeaders(response.headers, mode: options.mode)
        let status = response.status
        if let data = response.body.inHand {
            guard data.count <= options.maximumEntrySize else {
                response.headers.add(.cacheStatus, CacheStatus.miss.field(ttl: nil, replacedStale: forwarded))
                return response
            }
            await store.store(Self.entry(key, status, headers, data, varied, requestTime, responseTime))
            response.headers.add(.cacheStatus, CacheStatus.miss.field(ttl: nil, stored: true, replacedStale: forwarded))
            return response
        }
        let limit = options.maximumEntrySize
        let gathered = Locked<Data?>(Data())
        let store = store
        let writes = writes
        response.body = response.body.observing(
            chunk: { chunk in
                gathered.withLock { data in
                    guard let current = data else { return }
                    data = current.count + chunk.count <= limit ? current + chunk : nil
                }
            },
            end: { ending in
                guard case .complete = ending, let data = gathered.withLock({ $0 }) else { return }
                writes.run(for: key) { await store.store(Self.entry(key, status, headers, data, varied, requestTime, responseTime)) }
            })
        response.headers.add(.cacheStatus, CacheStatus.miss.field(ttl: nil, replacedStale: forwarded))
        return response
    }

    private static func entry(
        _ key: String, _ status: Int, _ headers: HTTPHeaders, _ body: Data, _ varied: [String: String], _ requestTime: Date,
        _ responseTime: Date
    ) -> CachedResponse {
        var headers = headers
        headers.set(.contentLength, String(body.count))
        return CachedResponse(url: key, status: status, headers: headers, body: body, varied: varied, requestTime: requestTime, responseTime: responseTime)
    }

    /// Whether RFC 9111 §3 lets this cache store `response` to `request`.
    private func storable(_ response: StreamedResponse, request: Request) -> Bool {
        let status = response.status
        guard status >= 200, status != 206, status != 304 else { return false }
        let asked = CacheControl(request.headers.values(for: .cacheControl))
        let said = CacheControl(response.headers.values(for: .cacheControl))
        if asked.noStore || said.noStore { return false }
        if options.mode == .shared {
            if said.isPrivate { return false }
            if request.headers.contains(.authorization), !(said.isPublic || said.sharedMaxAge != nil || said.mustRevalidate) { return false }
        }
        let vary = response.headers.values(for: .vary)
        if vary.contains(where: { HTTPSyntax.parts(of: $0, separatedBy: UInt8(ascii: ",")).contains("*") }) { return false }
        let explicit =
            said.maxAge != nil || (options.mode == .shared && said.sharedMaxAge != nil) || response.headers.contains(.expires)
        if explicit || said.isPublic || (said.isPrivate && options.mode == .private) { return true }
        // A heuristically cacheable status may be stored with no freshness at all (RFC 9111 §3):
        // a 200 with only an ETag, or with `no-cache`, is kept stale and revalidated before it
        // is used. One without a validator is kept only when something may serve it stale
        // (`stale-if-error`, `stale-while-revalidate`, the offline policy); otherwise it could
        // never answer a request.
        guard CacheDecision.heuristicallyCacheable.contains(status) else { return false }
        let headers = response.headers
        if headers.contains(.eTag) || headers.contains(.lastModified) { return true }
        return said.staleIfError != nil || said.staleWhileRevalidate != nil || options.servesStaleWhenOffline
    }

    /// Removes what is stored for the URL an unsafe request changed, and for its `Location` and
    /// `Content-Location` on the same origin (RFC 9111 §4.4).
    private func invalidate(_ key: String, after response: StreamedResponse, url: URL) async {
        await writes.wait(for: key)
        await store.removeAll(for: key)
        for name in [HeaderName.location, .contentLocation] {
            guard let value = response.headers[name], let target = URL(string: value, relativeTo: url)?.absoluteURL,
                target.scheme?.lowercased() == url.scheme?.lowercased(), target.host?.lowercased() == url.host?.lowercased(),
                target.port == url.port
            else { continue }
            await store.removeAll(for: Self.key(target))
        }
    }

    // MARK: Freshness

    /// How long `entry` stays fresh under this cache's options (``CacheDecision`` has the rule).
    func freshnessLifetime(_ entry: CachedResponse, said: CacheControl) -> TimeInterval {
        CacheDecision.freshnessLifetime(entry, said: said, options: options)
    }

    /// The newest stored response whose `Vary` fields match `request`.
    private func storedEntry(for request: Request, key: String) async -> CachedResponse? {
        await store.responses(for: key).filter { Self.matchesVary($0, request: request) }.max { $0.responseTime < $1.responseTime }
    }

    // MARK: Requests and responses

    /// `request` with the entry's validators, when it has any.
    private func revalidationRequest(_ request: Request, for entry: CachedResponse) -> Request {
        var conditional = request
        let headers = entry.headers
        if let tag = headers[.eTag] { conditional.headers.set(.ifNoneMatch, tag) }
        if let modified = headers[.lastModified] { conditional.headers.set(.ifModifiedSince, modified) }
        return conditional
    }

    /// The stored response as an answer, with its `Age` and where it came from.
    func serve(_ entry: CachedResponse, age: TimeInterval, lifetime: TimeInterval, as status: CacheStatus, detail: String? = nil)
        -> StreamedResponse
    {
        var headers = entry.headers
        headers.set(.age, String(Int(Swift.min(Swift.max(0, age), 2_147_483_648))))
        let ttl = lifetime - age
        headers.add(.cacheStatus, status.field(ttl: ttl.isFinite ? Int(Swift.max(-2_147_483_648, Swift.min(ttl, 2_147_483_648)).rounded(.down)) : nil, detail: detail))
        return StreamedResponse(status: entry.status, headers: headers, url: URL(string: entry.url), body: ByteStream(entry.body))
    }

    private static func gatewayTimeout(_ url: URL) -> StreamedResponse {
        StreamedResponse(
            status: 504, headers: [.cacheStatus: "\(CacheStatus.cacheName); fwd=miss; detail=only-if-cached"], url: url, body: ByteStream(Data()))
    }

    private static func isCancellation(_ error: any Error) -> Bool {
        if error is CancellationError { return true }
        if let error = error as? CourierError, case .cancelled = error.cause { return true }
        return false
    }
}
