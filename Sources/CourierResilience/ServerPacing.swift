@_spi(Transports) import CourierCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Paces calls to the rate limit each server announces, so that a client slows down before the
/// server has to refuse it, and remembers a `Retry-After` across calls, not only within one.
///
/// Per origin (scheme, host and port), from every response it sees:
/// - the IETF fields (`RateLimit: "default";r=0;t=30` with `RateLimit-Policy`, and the earlier
///   drafts' `RateLimit: limit=100, remaining=0, reset=30` and `RateLimit-Remaining` /
///   `RateLimit-Reset`), and the common `X-RateLimit-Remaining` / `X-RateLimit-Reset` (seconds,
///   or a Unix time as GitHub sends it): when no call is left in the window, calls wait until it
///   resets. Calls sent meanwhile are counted against the remaining quota, so that sixteen callers
///   do not all spend the last one;
/// - `Retry-After` on a 429 or 503: every call to the origin waits until then.
///
/// A wait longer than ``maximumWait`` is not made: the call fails at once with
/// ``CourierError/Cause/rateLimited(_:)`` (nothing is sent), which says when to try again. Each
/// wait is a ``ResilienceEvent/Kind/paced`` event, each refusal a
/// ``ResilienceEvent/Kind/rateLimited`` one. Values a hostile or broken server sends (negative,
/// huge, not numbers) are ignored or clamped, never trusted beyond ``maximumWait``.
///
/// Put it inside ``RetryMiddleware`` so that every attempt is paced and every response read
/// (``ResilienceStack`` does):
///
/// ```swift
/// let pacing = ServerPacing(maximumWait: .seconds(10))
/// let api = InMemoryExecutor.scripted([], then: .status(200)).with(RetryMiddleware(), pacing)
/// ```
///
/// One pacing is shared by every call that uses it (it is a reference); memory stays bounded (at
/// most ``maximumOrigins`` origins, the least recently used forgotten first).
public final class ServerPacing: Middleware {
    /// The longest a call waits for a rate limit before it fails instead (0 to a year).
    public let maximumWait: Duration
    /// The most origins tracked at once.
    public static let maximumOrigins = 1024

    private struct Limit {
        /// Calls left in the current window, as the server last said less those sent since.
        var remaining: Int?
        /// When the window resets, on the elapsed clock.
        var resetsAt: Duration?
        /// No call before this (a `Retry-After`).
        var blockedUntil: Duration?
        /// Calls admitted so far: an answer's count of calls left did not see the calls admitted
        /// after its own.
        var admitted = 0
        var lastUse = Duration.zero
    }

    private let clock: ElapsedClock
    private let wallClock: @Sendable () -> Date
    private let limits = Locked<[String: Limit]>([:])

    /// Creates the pacing.
    /// - Parameters:
    ///   - maximumWait: The longest a call waits before it fails with
    ///     ``CourierError/Cause/rateLimited(_:)``; 30 s by default.
    ///   - clock: The clock waits run on: `ContinuousClock` by default, a ``ManualClock`` in tests.
    ///   - now: The wall-clock time, for `Retry-After` dates and Unix reset times.
    public init(
        maximumWait: Duration = .seconds(30), clock: some Clock<Duration> = ContinuousClock(),
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.maximumWait = AttemptTimeoutMiddleware.clamped(maximumWait)
        self.clock = ElapsedClock(clock)
        self.wallClock = now
    }

    /// How long a call to the origin of `request` would wait now; zero when it may go.
    /// - Parameter request: A request to the origin.
    /// - Returns: The wait.
    public func currentWait(for request: Request) -> Duration {
        let origin = RetryBudget.origin(of: request)
        let now = clock.now
        return limits.withLock { limits in
            guard let limit = limits[origin] else { return .zero }
            return Self.wait(limit, now: now)
        }
    }

    /// Waits as the origin's rate limit asks, sends the request, and reads the limit the
    /// response announces.
    /// - Parameters:
    ///   - request: The request.
    ///   - next: The rest of the chain.
    /// - Returns: The response, unchanged.
    /// - Throws: ``CourierError/Cause/rateLimited(_:)`` when the wait would be longer than
    ///   ``maximumWait``, `CancellationError` when cancelled while waiting, or what the chain
    ///   throws.
    public func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
        let origin = RetryBudget.origin(of: request)
        // A bounded number of waits: each ends at a reset or a Retry-After that has passed, and a
        // call that waited this often goes anyway rather than wait forever on a server that keeps
        // moving its window.
        var ticket = 0
        for _ in 0..<8 {
            let wait: Duration
            (wait, ticket) = admit(origin)
            guard wait > .zero else { break }
            guard wait <= maximumWait else {
                ResilienceEvent.report(ResilienceEvent(.rateLimited, origin: origin, delay: wait))
                throw CourierError(.rateLimited(RateLimited(origin: origin, retryAfter: wait)), request: request)
            }
            ResilienceEvent.report(ResilienceEvent(.paced, origin: origin, delay: wait))
            try await clock.sleep(for: wait, as: .pacing)
        }
        let response = try await next(request)
        learn(from: response, origin: origin, ticket: ticket)
        return response
    }

    /// The wait before a call may go; when none, the call is counted against the quota and gets
    /// its place in the order of admissions.
    private func admit(_ origin: String) -> (wait: Duration, ticket: Int) {
        let now = clock.now
        return limits.withLock { limits in
            guard var limit = limits[origin] else { return (.zero, 0) }
            defer { limits[origin] = limit }
            limit.lastUse = now
            if let until = limit.blockedUntil, until <= now { limit.blockedUntil = nil }
            if let resets = limit.resetsAt, resets <= now {
                // A new window: its quota is unknown until the server answers again.
                limit.resetsAt = nil
                limit.remaining = nil
            }
            let wait = Self.wait(limit, now: now)
            guard wait == .zero else { return (wait, limit.admitted) }
            if let remaining = limit.remaining { limit.remaining = remaining - 1 }
            limit.admitted += 1
            return (.zero, limit.admitted)
        }
    }

    private static func wait(_ limit: Limit, now: Duration) -> Duration {
        var wait = Duration.zero
        if let until = limit.blockedUntil, until > now { wait = until - now }
        if let remaining = limit.remaining, remaining <= 0, let resets = limit.resetsAt, resets > now {
            wait = Swift.max(wait, resets - now)
        }
        return wait
    }

    /// Reads the limit a response announces.
    private func learn(from response: StreamedResponse, origin: String, ticket: Int) {
        let headers = response.headers
        let wall = wallClock()
        let announced = RateLimitFields.parse(headers, now: wall)
        var retryAfter: Duration?
        if response.status == 429 || response.status == 503 {
            retryAfter = RetryAfter.delay(headers[.retryAfter], now: wall).map(AttemptTimeoutMiddleware.clamped)
        }
        guard announced != nil || retryAfter != nil else { return }
        let now = clock.now
        limits.withLock { limits in
            var limit = limits[origin] ?? Limit()
            limit.lastUse = now
            if let announced {
                let resets = announced.reset.map { now + $0 }
                // The server counted the calls before this one; those admitted after it are
                // (most likely) still on their way.
                let left = announced.remaining - Swift.max(0, limit.admitted - ticket)
                if let current = limit.remaining, let known = limit.resetsAt, known > now {
                    // The same window as far as can be told: answers overtake one another, so an
                    // older, larger count must not undo the calls counted since; the earliest
                    // reset announced is the closest (a server rounds the seconds left up).
                    limit.remaining = Swift.min(current, left)
                    limit.resetsAt = resets.map { Swift.min(known, $0) } ?? known
                } else {
                    limit.remaining = left
                    limit.resetsAt = resets
                }
            }
            if let retryAfter { limit.blockedUntil = Swift.max(limit.blockedUntil ?? .zero, now + retryAfter) }
            limits[origin] = limit
            if limits.count > Self.maximumOrigins,
                let quietest = limits.filter({ $0.key != origin }).min(by: { $0.value.lastUse < $1.value.lastUse })?.key
            {
                limits[quietest] = nil
            }
        }
    }
}

/// The rate-limit fields of a response: calls remaining and time to reset.
enum RateLimitFields {
    struct Announced: Equatable {
        var remaining: Int
        var reset: Duration?
    }

    /// A Unix time is told from a number of seconds by its size: no window lasts 30 years.
    static let unixTimeThreshold: Int64 = 1_000_000_000

    static func parse(_ headers: HTTPHeaders, now: Date) -> Announced? {
        if let value = headers["RateLimit"], let found = ietf(value) { return found }
        if let remaining = integer(headers["RateLimit-Remaining"]) {
            return Announced(remaining: clamp(remaining), reset: seconds(headers["RateLimit-Reset"], now: nil))
        }
        if let remaining = integer(headers["X-RateLimit-Remaining"]) {
            return Announced(remaining: clamp(remaining), reset: seconds(headers["X-RateLimit-Reset"], now: now))
        }
        return nil
    }

    /// `"default";r=0;t=30, "burst";r=5;t=1` (the current draft) or
    /// `limit=100, remaining=0, reset=30` (the earlier ones). With several policies the most
    /// restrictive wins: an exhausted one with the longest reset, else the fewest remaining.
    static func ietf(_ value: String) -> Announced? {
        var found: [Announced] = []
        var dictionary: [String: String] = [:]
        for member in value.split(separator: ",").prefix(16) {
            let parts = member.split(separator: ";").map { $0.trimmingOptionalWhitespace() }
            var parameters: [String: String] = [:]
            for part in parts {
                let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
                guard pair.count == 2 else { continue }
                parameters[pair[0].lowercased()] = pair[1]
            }
            if let remaining = integer(parameters["r"]) {
                found.append(Announced(remaining: clamp(remaining), reset: seconds(parameters["t"], now: nil)))
            } else {
                dictionary.merge(parameters) { first, _ in first }
            }
        }
        if found.isEmpty, let remaining = integer(dictionary["remaining"]) {
            found.append(Announced(remaining: clamp(remaining), reset: seconds(dictionary["reset"], now: nil)))
        }
        let exhausted = found.filter { $0.remaining == 0 }
        if !exhausted.isEmpty { return exhausted.max { ($0.reset ?? .zero) < ($1.reset ?? .zero) } }
        return found.min { $0.remaining < $1.remaining }
    }

    private static func integer(_ value: String?) -> Int64? {
        guard let value = value?.trimmingOptionalWhitespace(), !value.isEmpty, value.count <= 19,
            value.allSatisfy({ $0.isASCII && $0.isNumber })
        else { return nil }
        return Int64(value)
    }

    private static func clamp(_ remaining: Int64) -> Int { Int(Swift.min(remaining, Int64(Int32.max))) }

    /// Seconds to wait: delta seconds, or (with `now`) a Unix time.
    private static func seconds(_ value: String?, now: Date?) -> Duration? {
        guard let number = integer(value) else { return nil }
        if let now, number >= unixTimeThreshold {
            let delta = Double(number) - now.timeIntervalSince1970
            return .seconds(Swift.min(Swift.max(0, delta), Request.maximumInterval))
        }
        return .seconds(Swift.min(Double(number), Request.maximumInterval))
    }
}
