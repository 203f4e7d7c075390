import CourierCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The cookies a client keeps, as a value: what servers set, stored by the rules of
/// [RFC 6265](https://www.rfc-editor.org/rfc/rfc6265), and what goes back with each request.
///
/// A jar is `Codable` (save it, load it next launch) and bounded: at most
/// ``Policy/maximumCookiesPerDomain`` cookies per domain and ``Policy/maximumCookies`` in all,
/// the least recently used evicted first, expired ones before anything else. To share one
/// between executors and calls, put it in a ``CookieStore`` and send through
/// ``CookieMiddleware``; this type itself is a plain value with no clock, so tests pass the
/// time they want.
///
/// ```swift
/// var jar = CookieJar()
/// jar.store(setCookie: ["session=abc; Path=/; HttpOnly"], from: url, at: now)
/// jar.cookieHeader(for: url, at: now)   // "session=abc"
/// ```
///
/// A saved jar holds cookie values, which are secrets: store it as you would a token.
public struct CookieJar: Sendable, Hashable, Codable {
    /// A jar's limits and rules.
    public struct Policy: Sendable, Hashable, Codable {
        /// The most bytes a cookie's name and value may have together; 4,096 by default
        /// (RFC 6265 §6.1's minimum, what browsers allow).
        public var maximumCookieSize: Int
        /// The most cookies one domain may have; 50 by default. The least recently used goes
        /// when a new one would pass it.
        public var maximumCookiesPerDomain: Int
        /// The most cookies the jar holds; 3,000 by default.
        public var maximumCookies: Int
        /// Domains to treat as public suffixes beyond the Public Suffix List Courier carries
        /// (see ``Cookie/init(setCookie:from:at:policy:)``): a private deployment's shared
        /// domains, lowercase, without a leading dot. Saved with the jar, so keep it short.
        public var publicSuffixes: Set<String>

        /// Creates a policy; negative limits count as `0`.
        /// - Parameters:
        ///   - maximumCookieSize: Bytes of name and value per cookie.
        ///   - maximumCookiesPerDomain: Cookies per domain.
        ///   - maximumCookies: Cookies in all.
        ///   - publicSuffixes: Extra public suffixes.
        public init(
            maximumCookieSize: Int = 4096, maximumCookiesPerDomain: Int = 50, maximumCookies: Int = 3000,
            publicSuffixes: Set<String> = []
        ) {
            self.maximumCookieSize = Swift.max(0, maximumCookieSize)
            self.maximumCookiesPerDomain = Swift.max(0, maximumCookiesPerDomain)
            self.maximumCookies = Swift.max(0, maximumCookies)
            self.publicSuffixes = Set(publicSuffixes.map(CookieDomain.canonical))
        }
    }

    /// The jar's limits and rules.
    public var policy: Policy
    /// Cookies by domain, each domain's in sending order.
    private var domains: [String: CookieBucket] = [:]
    /// How many cookies `domains` holds.
    public private(set) var count = 0
    /// The latest time given to a cookie's ``Cookie/lastAccess``: each use gets a later one, so
    /// the least recently used is one cookie, whatever the clock's resolution.
    private var latestUse = Date.distantPast
    /// The latest ``Cookie/created`` given, for the same reason: the `Cookie` field lists
    /// cookies of one path length oldest first.
    private var latestCreation = Date.distantPast
    /// Every store and use of a cookie, oldest first: the least recently used cookie is the first
    /// entry whose time is still its cookie's ``Cookie/lastAccess`` (a later use made the others
    /// stale). Eviction at the jar's limit reads it from the front instead of looking at every
    /// cookie, so storing at the limit costs what storing below it does. Not compared or saved.
    private var uses = UseOrder()
    /// For each name, the domains that hold a `Secure` cookie of that name, and how many: a
    /// store from an insecure origin looks at those alone, not at every domain. Derived from
    /// the cookies; not compared or saved.
    private var secureHolders: [String: [String: Int]] = [:]
    /// The earliest expiry of a stored cookie, or later (a removed cookie's): expired cookies
    /// are looked for only once it has passed.
    private var earliestExpiry: Date?

    /// Creates a jar.
    /// - Parameters:
    ///   - policy: Its limits and rules.
    ///   - cookies: Cookies to start with, as a saved jar had them; the limits apply, and a
    ///     cookie that could not go in a `Cookie` field is left out.
    public init(policy: Policy = Policy(), cookies: [Cookie] = []) {
        self.policy = policy
        for cookie in cookies.sorted(by: { $0.lastAccess < $1.lastAccess }) where Self.isSendable(cookie) {
            var cookie = cookie
            cookie.domain = CookieDomain.canonical(cookie.domain)
            remove(cookie.key)
            put(cookie)
            evict(at: .distantPast, keeping: cookie.key)
        }
    }

    /// Every cookie, expired ones included, ordered by domain, path and name, and a host's own
    /// cookie before a domain cookie of the same name: one order, whatever the jar's history.
    public var cookies: [Cookie] {
        domains.values.flatMap(\.cookies).sorted {
            ($0.domain, $0.path, $0.name, $0.hostOnly ? 0 : 1) < ($1.domain, $1.path, $1.name, $1.hostOnly ? 0 : 1)
        }
    }

    /// Whether the jar holds no cookie.
    public var isEmpty: Bool { count == 0 }

    /// Stores what a response's `Set-Cookie` fields set, field by field, as RFC 6265bis §5.7
    /// says: a cookie replaces the one with its name, domain, host-only flag and path (keeping
    /// its creation time), an expired one deletes it, and a refused one changes nothing.
    ///
    /// Each value is one field, as RFC 6265 reads it: a comma in it is part of it. (A transport
    /// that joins repeated fields splits them before this: ``splitJoinedSetCookie(_:)``.)
    /// - Parameters:
    ///   - values: The `Set-Cookie` field values.
    ///   - url: The URL of the request the response answered (the hop, on a redirect).
    ///   - now: The current time.
    /// - Returns: Why each refused field was refused, in order; empty when all were stored.
    @discardableResult
    public mutating func store(setCookie values: [String], from url: URL, at now: Date) -> [CookieRejection] {
        var rejections: [CookieRejection] = []
        let target = CookieTarget(url)
        for value in values {
            do {
                let cookie = try Cookie(setCookie: value, from: target, at: now, policy: policy)
                try insert(cookie, secureOrigin: target?.isSecure ?? false, at: now)
            } catch {
                rejections.append(error)
            }
        }
        return rejections
    }

    /// Stores a cookie made in code (not from a server), replacing the one with its name,
    /// domain and path; an expired cookie removes that one. A cookie that could not go in a
    /// `Cookie` field (a name that is not a token, neither a name nor a value, a control
    /// character or `;` in its value, no domain, a path without `/`) is not stored.
    /// - Parameters:
    ///   - cookie: The cookie.
    ///   - now: The current time, for expiry and eviction.
    public mutating func insert(_ cookie: Cookie, at now: Date) {
        guard Self.isSendable(cookie) else { return }
        try? insert(cookie, secureOrigin: true, at: now)
    }

    /// Whether a cookie made in code or read from a saved jar can go in a `Cookie` field: a
    /// token name, no control character in its value, a domain and a path. Others are left out
    /// (a saved jar edited by hand cannot put a line break into a request).
    static func isSendable(_ cookie: Cookie) -> Bool {
        (cookie.name.isEmpty ? !cookie.value.isEmpty : HTTPSyntax.isToken(cookie.name)) && !cookie.domain.isEmpty
            && cookie.path.hasPrefix("/") && !cookie.value.utf8.contains { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F || $0 == UInt8(ascii: ";") }
            // A nameless value that holds "=" would be read back as a name and a value.
            && !(cookie.name.isEmpty && cookie.value.utf8.contains(UInt8(ascii: "=")))
    }

    /// The storage rules after parsing (RFC 6265 §5.3 steps 11–12, RFC 6265bis §5.7).
    private mutating func insert(_ cookie: Cookie, secureOrigin: Bool, at now: Date) throws(CookieRejection) {
        var cookie = cookie
        if !secureOrigin, !cookie.secure, shadowsSecureCookie(cookie) { throw .wouldOverwriteSecureCookie }
        let old = domains[cookie.domain]?[cookie.key]
        if let old {
            cookie.created = old.created
        } else {
            // Cookies stored at one instant keep the order they came in.
            cookie.created = Self.later(than: latestCreation, now: cookie.created)
            latestCreation = cookie.created
        }
        guard !cookie.isExpired(at: now) else {
            if old != nil { remove(cookie.key) }
            return
        }
        cookie.lastAccess = use(at: now)
        // A replacement takes its old one's place.
        put(cookie)
        evict(at: now, keeping: cookie.key)
    }

    /// Whether a cookie from an insecure origin would replace or shadow a `Secure` one with its
    /// name: the domains match one way or the other and the new path covers the old one's.
    private func shadowsSecureCookie(_ cookie: Cookie) -> Bool {
        guard let holders = secureHolders[cookie.name] else { return false }
        for domain in holders.keys
        where CookieDomain.host(domain, matches: cookie.domain, isIP: false) || CookieDomain.host(cookie.domain, matches: domain, isIP: false) {
            for existing in domains[domain]?.cookies ?? [] where existing.secure && existing.name == cookie.name {
                if CookiePath.path(cookie.path, matches: existing.path) { return true }
            }
        }
        return false
    }

    /// The cookies that go with a request to `url` at `now`, in the order the `Cookie` field
    /// lists them (longer paths first, then older first); marks them used. Expired cookies of
    /// the domains looked at are removed.
    /// - Parameters:
    ///   - url: The request's URL.
    ///   - now: The current time.
    /// - Returns: The cookies, possibly none.
    public mutating func cookies(for url: URL, at now: Date) -> [Cookie] {
        var cookies: [Cookie] = []
        matching(url, at: now).forEach { cookies.append(copy $0) }
        return cookies
    }

    /// The `Cookie` field value for a request to `url` (`name=value; name2=value2`), or `nil`
    /// when no cookie goes with it.
    /// - Parameters:
    ///   - url: The request's URL.
    ///   - now: The current time.
    /// - Returns: The field value.
    public mutating func cookieHeader(for url: URL, at now: Date) -> String? {
        let matches = matching(url, at: now)
        guard !matches.isEmpty else { return nil }
        // Sized first and written once into the string's own storage: no growing, no copy.
        var size = 0
        matches.forEach { size += $0.name.utf8.count + $0.value.utf8.count + 3 }
        return String(unsafeUninitializedCapacity: size) { field in
            var end = 0
            matches.forEach { cookie in
                if end > 0 {
                    field[end] = UInt8(ascii: ";")
                    field[end + 1] = UInt8(ascii: " ")
                    end += 2
                }
                // A nameless cookie goes as its value alone (RFC 6265bis §5.8.3).
                if !cookie.name.isEmpty {
                    end = Self.write(cookie.name, into: field, at: end)
                    field[end] = UInt8(ascii: "=")
                    end += 1
                }
                end = Self.write(cookie.value, into: field, at: end)
            }
            return end
        }
    }

    /// Writes `text`'s bytes into `buffer` from `start` (which has room for them), in one copy
    /// where its storage allows; where they end.
    private static func write(_ text: String, into buffer: UnsafeMutableBufferPointer<UInt8>, at start: Int) -> Int {
        let copied = text.utf8.withContiguousStorageIfAvailable { bytes in
            guard let source = bytes.baseAddress, let target = buffer.baseAddress else { return start }
            (target + start).initialize(from: source, count: bytes.count)
            return start + bytes.count
        }
        if let copied { return copied }
        var end = start
        for byte in text.utf8 {
            buffer[end] = byte
            end += 1
        }
        return end
    }

    /// The cookies a request gets, in sending order, read where they lie: a domain's bucket (a
    /// copy of the jar's, after its cookies were marked used) with the positions of its matching
    /// cookies, or, for the few requests whose cookies come from two domains (a host's and its
    /// parent's), the buckets and the merged order.
    private enum Matches {
        case none
        case one(CookieBucket, [Int])
        case merged([CookieBucket], [(bucket: Int, position: Int)])

        var isEmpty: Bool {
            if case .none = self { return true }
            return false
        }

        /// Calls `body` with each cookie, in sending order.
        func forEach(_ body: (borrowing Cookie) -> Void) {
            switch self {
            case .none:
                return
            case .one(let bucket, let positions):
                bucket.cookies.withUnsafeBufferPointer { cookies in
                    for position in positions { body(cookies[position]) }
                }
            case .merged(let buckets, let order):
                for entry in order { buckets[entry.bucket].cookies.withUnsafeBufferPointer { body($0[entry.position]) } }
            }
        }
    }

    /// The cookies that go to `url`, in sending order, after they were marked used at one
    /// instant; the expired cookies of the domains looked at are removed. Each domain's bucket
    /// is in sending order already: one domain's cookies are taken as they lie, and the few
    /// requests whose cookies come from two domains merge them.
    private mutating func matching(_ url: URL, at now: Date) -> Matches {
        guard count > 0, let target = CookieTarget(url) else { return .none }
        let candidates = Self.candidateDomains(of: target)
        if let earliestExpiry, earliestExpiry <= now {
            for domain in candidates {
                guard let index = domains.index(forKey: domain) else { continue }
                forget(domains.values[index].removeAll { $0.isExpired(at: now) })
                if domains.values[index].isEmpty { domains.remove(at: index) }
            }
        }
        // The buckets with a cookie for the target, and the positions of those cookies. A
        // bucket's cookies all have its domain: whether the host matches it is asked once.
        var matched: [(domain: Dictionary<String, CookieBucket>.Index, positions: [Int])] = []
        matched.reserveCapacity(candidates.count)
        for domain in candidates {
            guard let index = domains.index(forKey: domain) else { continue }
            let positions = domains.values[index].positions(
                matching: target, hostIsDomain: target.host == domain,
                hostMatchesDomain: CookieDomain.host(target.host, matches: domain, isIP: target.isIP))
            if !positions.isEmpty { matched.append((index, positions)) }
        }
        guard !matched.isEmpty else { return .none }
        // One use for the call: the cookies sent together were used at one instant.
        let stamp = use(at: now)
        for entry in matched {
            domains.values[entry.domain].markUsed(at: entry.positions, stamp)
            // One entry for the domain's cookies used together, not one per cookie.
            uses.append(domain: domains.keys[entry.domain], at: stamp)
        }
        // Reads add to the order of uses too: kept as compact as stores keep it.
        if uses.needsCompacting(liveCount: count) { uses.rebuild(from: domains.values.lazy.flatMap(\.cookies)) }
        if matched.count == 1 { return .one(domains.values[matched[0].domain], matched[0].positions) }
        let buckets = matched.map { domains.values[$0.domain] }
        var order: [(bucket: Int, position: Int)] = []
        var next = matched.map { _ in 0 }
        while true {
            var first: (bucket: Int, position: Int)?
            for bucket in matched.indices where next[bucket] < matched[bucket].positions.count {
                let position = matched[bucket].positions[next[bucket]]
                if let current = first,
                    !CookieBucket.sendsFirst(buckets[bucket].cookies[position], buckets[current.bucket].cookies[current.position])
                {
                    continue
                }
                first = (bucket, position)
            }
            guard let first else { return .merged(buckets, order) }
            next[first.bucket] += 1
            order.append(first)
        }
    }

    /// Removes every cookie that has expired at `now`.
    /// - Parameter now: The current time.
    public mutating func removeExpired(at now: Date) {
        removeAll { $0.isExpired(at: now) }
    }

    /// Removes the cookies `shouldRemove` picks.
    /// - Parameter shouldRemove: Whether to remove a cookie.
    public mutating func removeAll(where shouldRemove: (Cookie) throws -> Bool) rethrows {
        var earliest: Date?
        for (domain, bucket) in domains {
            var doomed = false
            for cookie in bucket.cookies {
                if try shouldRemove(cookie) {
                    doomed = true
                } else if let expires = cookie.expires, expires < earliest ?? .distantFuture {
                    earliest = expires
                }
            }
            // Only the domains that lose a cookie are written back (asked again: the predicate
            // is a pure choice).
            guard doomed else { continue }
            var kept = bucket
            forget(try kept.removeAll(where: shouldRemove))
            domains[domain] = kept.isEmpty ? nil : kept
        }
        earliestExpiry = earliest
    }

    /// This jar without its session cookies (those with no expiry), as it should be when the
    /// session ends: before saving it, or when the app starts again.
    /// - Returns: The jar with persistent cookies only.
    public func endingSession() -> CookieJar {
        var jar = self
        jar.removeAll { $0.expires == nil }
        return jar
    }

    /// The domains whose cookies may go to `target`: its host, then each parent domain (names
    /// only: an IP address has no parents).
    private static func candidateDomains(of target: CookieTarget) -> [String] {
        guard !target.isIP else { return [target.host] }
        var domains = [target.host]
        // Found as bytes: a host is ASCII, and a search by Character would read each grapheme.
        let host = target.host.utf8
        var start = host.startIndex
        while let dot = host[start...].firstIndex(of: UInt8(ascii: ".")) {
            start = host.index(after: dot)
            if start != host.endIndex { domains.append(String(Substring(host[start...]))) }
        }
        return domains
    }

    /// `now`, or just after the latest use when that is not earlier.
    private mutating func use(at now: Date) -> Date {
        latestUse = Self.later(than: latestUse, now: now)
        return latestUse
    }

    /// `now`, or the instant just after `latest` when `now` is not later.
    private static func later(than latest: Date, now: Date) -> Date {
        now > latest ? now : Date(timeIntervalSinceReferenceDate: latest.timeIntervalSinceReferenceDate.nextUp)
    }

    private mutating func put(_ cookie: Cookie) {
        if cookie.lastAccess > latestUse { latestUse = cookie.lastAccess }
        if cookie.created > latestCreation { latestCreation = cookie.created }
        if let expires = cookie.expires, expires < earliestExpiry ?? .distantFuture { earliestExpiry = expires }
        if let old = domains[cookie.domain, default: CookieBucket()].put(cookie) {
            // The same name and domain: the count of Secure holders changes only with the flag.
            if old.secure != cookie.secure {
                noteSecure(old, -1)
                noteSecure(cookie, 1)
            }
        } else {
            count += 1
            noteSecure(cookie, 1)
        }
        uses.append(cookie.key, at: cookie.lastAccess)
        if uses.needsCompacting(liveCount: count) { uses.rebuild(from: domains.values.lazy.flatMap(\.cookies)) }
    }

    private mutating func remove(_ key: Cookie.Key) {
        if let removed = domains[key.domain]?.remove(key) {
            forget([removed])
            if domains[key.domain]?.isEmpty == true { domains[key.domain] = nil }
        }
    }

    /// Counts out cookies taken from their buckets.
    private mutating func forget(_ removed: [Cookie]) {
        count -= removed.count
        for cookie in removed { noteSecure(cookie, -1) }
    }

    /// Adds `change` to the count of `Secure` cookies named like `cookie` in its domain.
    private mutating func noteSecure(_ cookie: Cookie, _ change: Int) {
        guard cookie.secure else { return }
        let held = (secureHolders[cookie.name]?[cookie.domain] ?? 0) + change
        if held > 0 {
            secureHolders[cookie.name, default: [:]][cookie.domain] = held
        } else {
            secureHolders[cookie.name]?[cookie.domain] = nil
            if secureHolders[cookie.name]?.isEmpty == true { secureHolders[cookie.name] = nil }
        }
    }

    /// Keeps the limits: expired cookies go first, then the least recently used of the
    /// domain, then of the whole jar. `keeping` (the cookie just stored) goes last.
    private mutating func evict(at now: Date, keeping: Cookie.Key) {
        let domain = keeping.domain
        if count <= policy.maximumCookies, (domains[domain]?.count ?? 0) <= policy.maximumCookiesPerDomain { return }
        if let bucket = domains[domain], bucket.count > policy.maximumCookiesPerDomain {
            for cookie in bucket.cookies where cookie.isExpired(at: now) { remove(cookie.key) }
            while let bucket = domains[domain], bucket.count > policy.maximumCookiesPerDomain {
                guard let oldest = Self.leastRecentlyUsed(bucket.cookies, sparing: keeping) else { break }
                remove(oldest.key)
            }
        }
        if count > policy.maximumCookies {
            if let earliestExpiry, earliestExpiry <= now { removeExpired(at: now) }
            while count > policy.maximumCookies {
                guard let oldest = uses.leastRecentlyUsed(in: domains, sparing: keeping) else { break }
                remove(oldest)
            }
        }
        if count > policy.maximumCookies || (domains[domain]?.count ?? 0) > policy.maximumCookiesPerDomain {
            // A limit of 0: not even the new cookie stays.
            remove(keeping)
        }
    }

    /// Keys in the order of their uses, for eviction: an array read from a moving front. An
    /// entry names one cookie (a store), or a domain whose cookies were used together at its
    /// time (a read marks them all with one time: one entry, not one per cookie).
    private struct UseOrder: Sendable {
        private enum Used: Sendable {
            case cookie(Cookie.Key)
            case domain(String)
        }

        private var entries: [(at: Date, used: Used)] = []
        private var front = 0

        mutating func append(_ key: Cookie.Key, at time: Date) {
            entries.append((time, .cookie(key)))
        }

        mutating func append(domain: String, at time: Date) {
            entries.append((time, .domain(domain)))
        }

        /// Whether stale entries outnumber live cookies enough to rebuild (amortized: a rebuild
        /// costs what the appends since the last one did).
        func needsCompacting(liveCount: Int) -> Bool {
            entries.count - front > 2 * liveCount + 1024
        }

        /// One entry per cookie, by last use.
        mutating func rebuild(from cookies: some Sequence<Cookie>) {
            entries = cookies.map { ($0.lastAccess, .cookie($0.key)) }.sorted { $0.at < $1.at }
            front = 0
        }

        /// The least recently used cookie's key other than `sparing`, from the front; entries of
        /// removed cookies and of cookies used again since are dropped on the way. A domain's
        /// entry gives its cookies still last used at its time, oldest created first (as a
        /// domain's own eviction orders ties), and stays at the front until none is left.
        mutating func leastRecentlyUsed(in domains: [String: CookieBucket], sparing: Cookie.Key) -> Cookie.Key? {
            var spared: (at: Date, used: Used)?
            defer { if let spared { entries.append(spared) } }
            while front < entries.count {
                let entry = entries[front]
                switch entry.used {
                case .cookie(let key):
                    front += 1
                    guard let cookie = domains[key.domain]?[key], cookie.lastAccess == entry.at else { continue }
                    if key == sparing {
                        spared = entry
                        continue
                    }
                    trimFront()
                    return key
                case .domain(let domain):
                    var oldest: (created: Date, key: Cookie.Key)?
                    var holdsSparing = false
                    for cookie in domains[domain]?.cookies ?? [] where cookie.lastAccess == entry.at {
                        if cookie.key == sparing {
                            holdsSparing = true
                        } else if oldest.map({ cookie.created < $0.created }) ?? true {
                            oldest = (cookie.created, cookie.key)
                        }
                    }
                    guard let oldest else {
                        // Spent: the cookie spared keeps an entry of its own.
                        front += 1
                        if holdsSparing { spared = (entry.at, .cookie(sparing)) }
                        continue
                    }
                    return oldest.key
                }
            }
            return nil
        }

        /// Drops the entries before the front once they are most of the array.
        private mutating func trimFront() {
            if front > 4096, front * 2 > entries.count {
                entries.removeFirst(front)
                front = 0
            }
        }
    }

    private static func leastRecentlyUsed(_ cookies: some Sequence<Cookie>, sparing key: Cookie.Key) -> Cookie? {
        var oldest: Cookie?
        for cookie in cookies where cookie.key != key {
            if let current = oldest, (current.lastAccess, current.created) <= (cookie.lastAccess, cookie.created) { continue }
            oldest = cookie
        }
        return oldest
    }

    // MARK: Equality

    /// Two jars are equal when they hold the same cookies under the same policy (their history
    /// of uses is not compared).
    public static func == (lhs: CookieJar, rhs: CookieJar) -> Bool {
        lhs.policy == rhs.policy && lhs.domains == rhs.domains
    }

    /// Hashes the policy and the cookies.
    /// - Parameter hasher: The hasher.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(policy)
        hasher.combine(domains)
    }

    // MARK: Codable

    private enum CodingKeys: String, CodingKey {
        case policy, cookies
    }

    /// Reads a saved jar; its limits apply to the cookies it held.
    /// - Parameter decoder: The decoder.
    /// - Throws: What the decoder throws.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let policy = try container.decodeIfPresent(Policy.self, forKey: .policy) ?? Policy()
        self.init(policy: policy, cookies: try container.decodeIfPresent([Cookie].self, forKey: .cookies) ?? [])
    }

    /// Writes the jar: its policy and every cookie (values included).
    /// - Parameter encoder: The encoder.
    /// - Throws: What the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(policy, forKey: .policy)
        try container.encode(cookies, forKey: .cookies)
    }
}

extension CookieJar: CustomStringConvertible, CustomReflectable {
    /// The cookies, one per line, values hidden.
    public var description: String {
        "CookieJar(\(count) cookies)" + cookies.map { "\n  \($0)" }.joined()
    }

    /// The jar's policy and cookies for `dump` and debuggers, values hidden.
    public var customMirror: Mirror {
        Mirror(self, children: ["policy": policy, "cookies": cookies], displayStyle: .struct)
    }
}
