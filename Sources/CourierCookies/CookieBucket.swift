import CourierCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One domain's cookies in a jar, kept in the order a `Cookie` field lists them
/// (``sendsFirst(_:_:)``), each found by its key with a hash and a binary search.
///
/// Keeping the order as cookies come and go is what makes reading cheap: a request's cookies are
/// the bucket's matching ones as they lie, written out with no copy and no sort. A cookie's place
/// follows from its key and its creation time alone, which a replacement keeps (the common store
/// changes nothing but its slot), so the bucket records each key's creation time, not a position
/// that every insertion before it would move: no mutation costs more than moving the array's tail.
struct CookieBucket: Sendable, Hashable {
    /// The cookies, in sending order.
    private(set) var cookies: [Cookie] = []
    /// Each cookie's creation time, by key: with the key, its place in the order.
    private var created: [Cookie.Key: Date] = [:]

    /// How many cookies the bucket holds.
    var count: Int { cookies.count }

    /// Whether the bucket holds no cookie.
    var isEmpty: Bool { cookies.isEmpty }

    /// The cookie with `key`, if the bucket holds it.
    subscript(key: Cookie.Key) -> Cookie? {
        position(of: key).map { cookies[$0] }
    }

    /// Stores `cookie`, replacing the one with its key.
    /// - Returns: The cookie replaced; `nil` when `cookie` is new to the bucket.
    @discardableResult
    mutating func put(_ cookie: Cookie) -> Cookie? {
        let key = cookie.key
        if let position = position(of: key) {
            let old = cookies[position]
            // Same key and creation time: the same place in the order.
            if old.created == cookie.created {
                cookies[position] = cookie
            } else {
                cookies.remove(at: position)
                insert(cookie, key: key)
            }
            return old
        }
        insert(cookie, key: key)
        return nil
    }

    /// Removes the cookie with `key`.
    /// - Returns: The cookie removed, if the bucket held it.
    @discardableResult
    mutating func remove(_ key: Cookie.Key) -> Cookie? {
        guard let position = position(of: key) else { return nil }
        created[key] = nil
        return cookies.remove(at: position)
    }

    /// The positions of the cookies that go to `target`, in sending order (expiry is not
    /// checked). Every cookie of a bucket has the bucket's domain, so the caller says once
    /// whether the target's host is that domain (`hostIsDomain`, for host-only cookies) and
    /// whether it domain-matches it (`hostMatchesDomain`, for the others). Read in place: no
    /// cookie is copied to be looked at, and the request's path is read once.
    func positions(matching target: CookieTarget, hostIsDomain: Bool, hostMatchesDomain: Bool) -> [Int] {
        guard hostIsDomain || hostMatchesDomain else { return [] }
        return cookies.withUnsafeBufferPointer { cookies in
            var requestPath = target.path
            return requestPath.withUTF8 { requestPath in
                var found: [Int] = []
                for position in cookies.indices {
                    if cookies[position].secure && !target.isSecure { continue }
                    guard cookies[position].hostOnly ? hostIsDomain : hostMatchesDomain,
                        CookiePath.path(requestPath, matches: cookies[position].path)
                    else { continue }
                    if found.isEmpty { found.reserveCapacity(cookies.count - position) }
                    found.append(position)
                }
                return found
            }
        }
    }

    /// Marks the cookies at `positions` used at `time`.
    mutating func markUsed(at positions: [Int], _ time: Date) {
        cookies.withUnsafeMutableBufferPointer { cookies in
            for position in positions { cookies[position].lastAccess = time }
        }
    }

    /// Removes the cookies `shouldRemove` picks, keeping the order.
    /// - Returns: The cookies removed.
    mutating func removeAll(where shouldRemove: (Cookie) throws -> Bool) rethrows -> [Cookie] {
        var removed: [Cookie] = []
        try cookies.removeAll { cookie in
            guard try shouldRemove(cookie) else { return false }
            removed.append(cookie)
            return true
        }
        for cookie in removed { created[cookie.key] = nil }
        return removed
    }

    /// Where the cookie with `key` is: its creation time, then a binary search.
    private func position(of key: Cookie.Key) -> Int? {
        guard let time = created[key] else { return nil }
        let position = firstPosition { !Self.precedes($0.key, $0.created, key, time) }
        return position < cookies.count && cookies[position].key == key ? position : nil
    }

    private mutating func insert(_ cookie: Cookie, key: Cookie.Key) {
        created[key] = cookie.created
        cookies.insert(cookie, at: firstPosition { !Self.precedes($0.key, $0.created, key, cookie.created) })
    }

    /// The first position whose cookie `isAtOrAfter` holds for (it holds for every one after).
    private func firstPosition(where isAtOrAfter: (Cookie) -> Bool) -> Int {
        var low = 0, high = cookies.count
        while low < high {
            let middle = (low + high) / 2
            if isAtOrAfter(cookies[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }

    /// The order cookies go in a `Cookie` field: the longer path first, then the older (RFC 6265
    /// §5.4 step 2); ties, which that leaves to the client, go the narrower domain first, then a
    /// host's own cookie, then by name and path, so that a jar and its saved copy send one field.
    static func sendsFirst(_ a: Cookie, _ b: Cookie) -> Bool {
        precedes(a.key, a.created, b.key, b.created)
    }

    /// ``sendsFirst(_:_:)`` on what decides it: a cookie's key and creation time. A total order
    /// on distinct keys.
    private static func precedes(_ a: Cookie.Key, _ aCreated: Date, _ b: Cookie.Key, _ bCreated: Date) -> Bool {
        let aLength = a.path.utf8.count, bLength = b.path.utf8.count
        if aLength != bLength { return aLength > bLength }
        if aCreated != bCreated { return aCreated < bCreated }
        if a.domain.utf8.count != b.domain.utf8.count { return a.domain.utf8.count > b.domain.utf8.count }
        if a.hostOnly != b.hostOnly { return a.hostOnly }
        return (a.name, a.path, a.domain) < (b.name, b.path, b.domain)
    }

    // The creation times follow from the cookies: two buckets with the same cookies are equal.
    static func == (lhs: CookieBucket, rhs: CookieBucket) -> Bool {
        lhs.cookies == rhs.cookies
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(cookies)
    }
}
