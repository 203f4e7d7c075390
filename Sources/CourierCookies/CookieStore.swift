import CourierCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A ``CookieJar`` shared by every executor and call that sends through it, with the clock its
/// cookies expire on. ``CookieMiddleware`` reads and fills it.
///
/// The time is read from a `Clock`: the wall-clock time when the store was made, plus the
/// clock's time since. Tests pass a ``ManualClock`` and a fixed start, so `Max-Age` and
/// `Expires` run out exactly when the test advances the clock.
///
/// ```swift
/// let cookies = CookieStore()
/// let executor = URLSessionExecutor().eachHop(CookieMiddleware(cookies))
/// _ = try await executor.send(.post |> url("https://api.example.com/login"))   // Set-Cookie: session=…
/// // Saved and restored, the login survives a restart (session cookies included):
/// let saved = try JSONEncoder().encode(cookies.jar)
/// cookies.replace(with: try JSONDecoder().decode(CookieJar.self, from: saved))
/// ```
public final class CookieStore: Sendable {
    private let state: Locked<CookieJar>
    private let time: WallTime

    /// Creates a store.
    /// - Parameters:
    ///   - jar: The cookies to start with (a saved jar); empty by default.
    ///   - clock: The clock expiry runs on; `ContinuousClock` by default.
    ///   - start: The wall-clock time the clock's present stands for; now by default.
    public init(_ jar: CookieJar = CookieJar(), clock: some Clock<Duration> = ContinuousClock(), start: Date = Date()) {
        self.state = Locked(jar)
        self.time = WallTime(clock: clock, start: start)
    }

    /// The current time on the store's clock.
    public var now: Date { time.now }

    /// Whether the jar holds no cookie.
    public var isEmpty: Bool { state.withLock { $0.isEmpty } }

    /// A copy of the jar as it is now: to save, or to look at.
    public var jar: CookieJar { state.withLock { $0 } }

    /// Replaces the jar (a loaded one, or an empty one to forget every cookie).
    /// - Parameter jar: The new jar.
    public func replace(with jar: CookieJar) {
        state.withLock { $0 = jar }
    }

    /// Changes the jar in place, under the store's lock.
    /// - Parameter change: Changes the jar; must not call back into this store.
    /// - Returns: What `change` returns.
    @discardableResult
    public func update<Result>(_ change: (inout CookieJar) throws -> Result) rethrows -> Result {
        try state.withLock(change)
    }

    /// Stores what a response's `Set-Cookie` fields set (see ``CookieJar/store(setCookie:from:at:)``).
    /// - Parameters:
    ///   - values: The `Set-Cookie` field values.
    ///   - url: The URL of the request the response answered.
    /// - Returns: Why each refused field was refused.
    @discardableResult
    public func store(setCookie values: [String], from url: URL) -> [CookieRejection] {
        let now = now
        return state.withLock { $0.store(setCookie: values, from: url, at: now) }
    }

    /// The `Cookie` field value for a request to `url`, or `nil` when no cookie goes with it.
    /// - Parameter url: The request's URL.
    /// - Returns: The field value.
    public func cookieHeader(for url: URL) -> String? {
        let now = now
        return state.withLock { jar in jar.isEmpty ? nil : jar.cookieHeader(for: url, at: now) }
    }
}

extension CookieStore: CustomStringConvertible {
    /// The jar's description: names and domains, values hidden.
    public var description: String { jar.description }
}
