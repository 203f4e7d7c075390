import CourierCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What an ``HTTPCache`` does with a `GET`, decided from the request, the stored response that
/// matches it (if any), the time and the cache's options alone (RFC 9111 §4): a value with no
/// store, network or clock behind it, so every rule can be checked on its own, as OkHttp's
/// `CacheStrategy` is. ``HTTPCache`` looks up the stored response, makes the decision and
/// carries it out.
///
/// ```swift
/// let decision = CacheDecision(for: request, stored: entry, now: Date(), options: HTTPCache.Options())
/// if case .serve(.hit, _) = decision.action { print("fresh for \(decision.lifetime! - decision.age!) s") }
/// ```
public struct CacheDecision: Sendable, Hashable {
    /// What to do.
    public enum Action: Sendable, Hashable {
        /// Send the request as it is and store the answer when it may be: nothing is stored for
        /// it, or the request asks to reload.
        case fetch
        /// Answer with the stored response, marked with `status` (``CacheStatus/hit`` when
        /// fresh, ``CacheStatus/stale`` where the request or the cache policy accepts that);
        /// `detail` says why a stale one answers.
        case serve(CacheStatus, detail: String?)
        /// Answer with the stored response, stale within its `stale-while-revalidate` window
        /// (RFC 5861), and revalidate it in the background.
        case serveAndRevalidateInBackground
        /// Send the request with the stored response's validators: a `304` freshens it and it
        /// answers. `staleIfError`: a `5xx` or a failure may be answered with it, stale
        /// (`stale-if-error`, or within `stale-while-revalidate` when nothing revalidates in the
        /// background).
        case revalidate(staleIfError: Bool)
        /// Answer `504 Gateway Timeout` without sending: the request accepts only a stored
        /// answer (`only-if-cached`, ``CachePolicy/returnCacheDataDontLoad``) and none fits.
        case unsatisfiable
    }

    /// What to do.
    public let action: Action
    /// The stored response's age now (RFC 9111 §4.2.3), in seconds, when one matched.
    public let age: TimeInterval?
    /// How long the stored response stays fresh (RFC 9111 §4.2.1, heuristics included), in
    /// seconds, when one matched.
    public let lifetime: TimeInterval?

    /// Decides what to do with `request`.
    /// - Parameters:
    ///   - request: A `GET` without `Range` or caller's own validators (``HTTPCache`` answers
    ///     those itself).
    ///   - stored: The newest stored response whose `Vary` fields match the request, if any.
    ///   - now: The wall-clock time of the decision.
    ///   - options: The cache's options (its mode and heuristic limit).
    ///   - revalidatesInBackground: Whether the cache has an executor to revalidate with after
    ///     the call (``HTTPCache/backgroundRevalidation``).
    public init(
        for request: Request, stored: CachedResponse?, now: Date, options: HTTPCache.Options, revalidatesInBackground: Bool = false
    ) {
        let headers = request.headers
        let asked = CacheControl(headers.values(for: .cacheControl))
        let pragma = !headers.contains(.cacheControl) && headers.values(for: .pragma).contains { $0.lowercased().contains("no-cache") }
        let validate = asked.noCache || !asked.noCacheFields.isEmpty || pragma
        var onlyIfCached = asked.onlyIfCached
        var anyAge = false
        switch request.cachePolicy {
        case .reloadIgnoringLocalCacheData?:
            self.init(.fetch)
            return
        case .returnCacheDataElseLoad?:
            anyAge = true
        case .returnCacheDataDontLoad?:
            anyAge = true
            onlyIfCached = true
        case .useProtocolCachePolicy?, nil:
            break
        }
        guard let entry = stored else {
            self.init(onlyIfCached ? .unsatisfiable : .fetch)
            return
        }
        let said = CacheControl(entry.headers.values(for: .cacheControl))
        let age = Self.currentAge(entry, now: now)
        let lifetime = Self.freshnessLifetime(entry, said: said, options: options)
        let fresh = lifetime > age
        let mustRevalidate = Self.mustRevalidate(said, options: options)
        func decided(_ action: Action) -> CacheDecision { CacheDecision(action, age: age, lifetime: lifetime) }

        if anyAge {
            self = decided(.serve(fresh ? .hit : .stale, detail: nil))
            return
        }
        if !validate && !said.noCache {
            if fresh {
                let tooOld = asked.maxAge.map { age > TimeInterval($0) && !said.immutable } ?? false
                let tooSoonStale = asked.minFresh.map { lifetime - age < TimeInterval($0) } ?? false
                if !tooOld && !tooSoonStale {
                    self = decided(.serve(.hit, detail: nil))
                    return
                }
            } else if let maxStale = asked.maxStale, !mustRevalidate, age - lifetime <= TimeInterval(maxStale) {
                self = decided(.serve(.stale, detail: nil))
                return
            } else if revalidatesInBackground, let window = said.staleWhileRevalidate, !mustRevalidate,
                age - lifetime <= TimeInterval(window)
            {
                self = decided(.serveAndRevalidateInBackground)
                return
            }
        }
        if onlyIfCached {
            self = decided(.unsatisfiable)
            return
        }
        let window = [said.staleIfError, asked.staleIfError, said.staleWhileRevalidate].compactMap { $0 }.max()
        let staleIfError = window.map { age - lifetime <= TimeInterval($0) } ?? false
        self = decided(.revalidate(staleIfError: staleIfError && !mustRevalidate))
    }

    private init(_ action: Action, age: TimeInterval? = nil, lifetime: TimeInterval? = nil) {
        self.action = action
        self.age = age
        self.lifetime = lifetime
    }

    // MARK: The rules the decision reads

    /// Statuses whose responses may get heuristic freshness (RFC 9110 §15.1).
    static let heuristicallyCacheable: Set<Int> = [200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]

    /// How long `entry` stays fresh (RFC 9111 §4.2.1), heuristics included (§4.2.2).
    static func freshnessLifetime(_ entry: CachedResponse, said: CacheControl, options: HTTPCache.Options) -> TimeInterval {
        if options.mode == .shared, let shared = said.sharedMaxAge { return TimeInterval(shared) }
        if let maxAge = said.maxAge { return TimeInterval(maxAge) }
        let headers = entry.headers
        if let expires = headers[.expires] {
            // An invalid Expires (often "0") means already expired.
            guard let date = HTTPDate.parse(expires) else { return 0 }
            let origin = headers[.date].flatMap { HTTPDate.parse($0) } ?? entry.responseTime
            return date.timeIntervalSince(origin)
        }
        // Heuristics apply to a heuristically cacheable status, or to any response marked
        // explicitly cacheable (`public`) without a lifetime of its own (RFC 9111 §4.2.2).
        guard heuristicallyCacheable.contains(entry.status) || said.isPublic,
            let modified = headers[.lastModified].flatMap({ HTTPDate.parse($0) })
        else { return 0 }
        let origin = headers[.date].flatMap { HTTPDate.parse($0) } ?? entry.responseTime
        return Swift.min(Swift.max(0, origin.timeIntervalSince(modified) * options.heuristicShare), options.maximumHeuristicLifetime)
    }

    /// The entry's age at `now` (RFC 9111 §4.2.3).
    static func currentAge(_ entry: CachedResponse, now: Date) -> TimeInterval {
        let headers = entry.headers
        let ageValue = headers[.age].flatMap(ageSeconds).map(TimeInterval.init) ?? 0
        let dateValue = headers[.date].flatMap { HTTPDate.parse($0) } ?? entry.responseTime
        let apparentAge = Swift.max(0, entry.responseTime.timeIntervalSince(dateValue))
        let responseDelay = Swift.max(0, entry.responseTime.timeIntervalSince(entry.requestTime))
        let correctedInitialAge = Swift.max(apparentAge, Swift.min(ageValue, 1e12) + responseDelay)
        return correctedInitialAge + Swift.max(0, now.timeIntervalSince(entry.responseTime))
    }

    /// An `Age` field's seconds (RFC 9111 §5.1): the first member of a list; read cautiously
    /// when malformed, as at least the whole seconds it starts with (`7200.5` or `7200s` is
    /// 7200: a cache must not take a response for younger than it says); ignored without a
    /// leading digit (`abc`, `-5`).
    static func ageSeconds(_ value: String) -> Int? {
        let first = HTTPSyntax.parts(of: value, separatedBy: UInt8(ascii: ",")).first ?? ""
        let digits = first.utf8.prefix { $0 >= 0x30 && $0 <= 0x39 }
        guard !digits.isEmpty else { return nil }
        return Int(String(decoding: digits, as: UTF8.self)) ?? Int.max
    }

    /// Whether a stale response must not answer without the origin's word (RFC 9111
    /// §5.2.2.2, and §5.2.2.8/§5.2.2.10 in a shared cache).
    static func mustRevalidate(_ said: CacheControl, options: HTTPCache.Options) -> Bool {
        said.mustRevalidate || (options.mode == .shared && (said.proxyRevalidate || said.sharedMaxAge != nil))
    }
}
