#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One domain's cookies in a jar, kept in the order a `Cookie` field lists them
/// (``sendsFirst(_:_:)``), each found by its key in constant time.
///
/// Keeping the order as cookies come and go is what makes reading cheap: a request's cookies are
/// the bucket's matching ones as they lie, written out with no copy and no sort. The order
/// depends only on what a replacement keeps (path and creation time), so replacing a cookie,
/// the common store, changes nothing but its slot.
struct CookieBucket: Sendable, Hashable {
    /// The cookies, in sending order.
    private(set) var cookies: [Cookie] = []
    /// Each cookie's position in `cookies`.
    private var positions: [Cookie.Key: Int] = [:]

    /// How many cookies the bucket holds.
    var count: Int { cookies.count }

    /// Whether the bucket holds no cookie.
    var isEmpty: Bool { cookies.isEmpty }

    /// The cookie with `key`, if the bucket holds it.
    subscript(key: Cookie.Key) -> Cookie? {
        positions[key].map { cookies[$0] }
    }

    /// Stores `cookie`, replacing the one with its key.
    /// - Returns: The cookie replaced; `nil` when `cookie` is new to the bucket.
    @discardableResult
    mutating func put(_ cookie: Cookie) -> Cookie? {
        if let position = positions[cookie.key] {
            let old = cookies[position]
            // Same path and creation time: the same place in the order.
            if old.created == cookie.created {
                cookies[position] = cookie
            } else {
                remove(at: position)
                insert(cookie)
            }
            return old
        }
        insert(cookie)
        return nil
    }

    /// Removes the cookie with `key`.
    /// - Returns: The cookie removed, if the bucket held it.
    @discardableResult
    mutating func remove(_ key: Cookie.Key) -> Cookie? {
        guard let position = positions[key] else { return nil }
        return remove(at: position)
    }

    /// The positions of the cookies that go to `target`, in sending order (expiry is not
    /// checked). Read in place: no cookie is copied to be looked at.
    func positions(matching target: CookieTarget) -> [Int] {
        cookies.withUnsafeBufferPointer { cookies in
            var found: [Int] = []
            for position in cookies.indices
            where Cookie.matches(target, secure: cookies[position].secure, hostOnly: cookies[position].hostOnly, domain: cookies[position].domain, path: cookies[position].path) {
                found.append(position)
            }
            return found
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
        if !removed.isEmpty { reindex(from: 0) }
        return removed
    }

    private mutating func insert(_ cookie: Cookie) {
        // Most cookies are the newest of their path's length: they go last, or near it.
        var position = cookies.endIndex
        while position > cookies.startIndex, Self.sendsFirst(cookie, cookies[position - 1]) { position -= 1 }
        cookies.insert(cookie, at: position)
        reindex(from: position)
    }

    @discardableResult
    private mutating func remove(at position: Int) -> Cookie {
        let cookie = cookies.remove(at: position)
        positions[cookie.key] = nil
        reindex(from: position)
        return cookie
    }

    /// Records the positions from `start` on.
    private mutating func reindex(from start: Int) {
        if start == 0 { positions.removeAll(keepingCapacity: true) }
        for position in cookies.indices[start...] { positions[cookies[position].key] = position }
    }

    /// The order cookies go in a `Cookie` field: the longer path first, then the older (RFC 6265
    /// §5.4 step 2); ties, which that leaves to the client, go the narrower domain first, then a
    /// host's own cookie, then by name and path, so that a jar and its saved copy send one field.
    static func sendsFirst(_ a: Cookie, _ b: Cookie) -> Bool {
        let aLength = a.path.utf8.count, bLength = b.path.utf8.count
        if aLength != bLength { return aLength > bLength }
        if a.created != b.created { return a.created < b.created }
        if a.domain.utf8.count != b.domain.utf8.count { return a.domain.utf8.count > b.domain.utf8.count }
        if a.hostOnly != b.hostOnly { return a.hostOnly }
        return (a.name, a.path, a.domain) < (b.name, b.path, b.domain)
    }

    // The positions follow from the cookies: two buckets with the same cookies are equal.
    static func == (lhs: CookieBucket, rhs: CookieBucket) -> Bool {
        lhs.cookies == rhs.cookies
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(cookies)
    }
}
