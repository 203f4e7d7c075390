import CourierCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A limit on retries as a share of recent traffic, per origin, shared by every call that uses
/// it: the rule that keeps a fleet of clients from multiplying an outage's load by their retry
/// count.
///
/// Over a sliding ``window`` each origin (scheme, host and port) may be retried at most
/// `minimumPerSecond × window` times plus ``ratio`` times the calls made to it. With the default
/// 20% and a floor of one retry a second, a service sending 1,000 calls in ten seconds to an origin
/// that answers them all with an error makes at most 1,210 attempts, whatever the retry policy's
/// ``RetryPolicy/maxAttempts``; a quiet service can still retry its occasional failure. A retry
/// the budget refuses is not made: the call ends with its last response or error, as when the
/// attempts run out. (An attempt whose connection is lost before any answer is sent once more by
/// the ``Exchange`` when that connection had been reused, or its transport cannot tell:
/// ``TransportFailure/connectionWasReused``.)
///
/// Give one budget to the ``RetryMiddleware`` of an executor (or of several executors that call
/// the same services):
///
/// ```swift
/// let budget = RetryBudget()                       // 20% of recent calls, per origin
/// let api = URLSessionExecutor().with(RetryMiddleware(policy: RetryPolicy(maxAttempts: 4), budget: budget))
/// ```
///
/// Memory stays bounded: an origin with no traffic for a whole window is forgotten, and at most
/// ``maximumOrigins`` are tracked (past that, the quietest is dropped).
public final class RetryBudget: Sendable {
    /// The share of recent calls an origin may be retried, `0...1` (values outside are clamped;
    /// a non-finite one counts as `0`).
    public let ratio: Double
    /// Retries an origin may always have per second, whatever its traffic (`0` or more).
    public let minimumPerSecond: Double
    /// How far back calls and retries count.
    public let window: Duration
    /// The most origins tracked at once.
    public static let maximumOrigins = 1024

    /// The budget whose ``recordCall(_:)`` a ``RetryMiddleware`` already made for the current
    /// call, so that a ``HedgingMiddleware`` inside it sharing the budget does not count the call
    /// twice.
    @TaskLocal static var recordedCall: ObjectIdentifier?

    private let clock: ElapsedClock
    /// Per origin: calls (first) and retries (second).
    private let origins = Locked<[String: SlidingCounts]>([:])

    /// Creates a budget.
    /// - Parameters:
    ///   - ratio: The share of recent calls an origin may be retried; 0.2 by default.
    ///   - minimumPerSecond: Retries always allowed per second per origin; 1 by default.
    ///   - window: How far back calls and retries count; 10 s by default (at least 10 ms).
    ///   - clock: The clock the window runs on: `ContinuousClock` by default, a ``ManualClock``
    ///     in tests.
    public init(
        ratio: Double = 0.2, minimumPerSecond: Double = 1, window: Duration = .seconds(10),
        clock: some Clock<Duration> = ContinuousClock()
    ) {
        self.ratio = ratio.isFinite ? Swift.min(1, Swift.max(0, ratio)) : 0
        self.minimumPerSecond = minimumPerSecond.isFinite ? Swift.max(0, minimumPerSecond) : 0
        let window = Swift.max(window, .milliseconds(10))
        self.window = Swift.min(window, .seconds(Request.maximumInterval))
        self.clock = ElapsedClock(clock)
    }

    /// Counts a call to the origin of `request` (its first attempt).
    /// - Parameter request: The request.
    public func recordCall(_ request: Request) {
        let key = Self.origin(of: request)
        let slice = currentSlice()
        origins.withLock { origins in
            var origin = origins[key] ?? SlidingCounts()
            origin.slide(to: slice)
            origin.add(first: 1, in: slice)
            origins[key] = origin
            if origins.count > Self.maximumOrigins { forgetQuietest(&origins, keeping: key, now: slice) }
        }
    }

    /// Takes one retry from the budget of the origin of `request`, if it has one left.
    /// - Parameter request: The request to retry.
    /// - Returns: Whether the retry may be made (and was counted).
    public func withdrawRetry(for request: Request) -> Bool {
        let key = Self.origin(of: request)
        let slice = currentSlice()
        let floor = minimumPerSecond * window.seconds
        return origins.withLock { origins in
            var origin = origins[key] ?? SlidingCounts()
            origin.slide(to: slice)
            let allowed = Double(origin.second + 1) <= floor + ratio * Double(origin.first)
            if allowed { origin.add(second: 1, in: slice) }
            origins[key] = origin
            return allowed
        }
    }

    /// The calls and retries counted for the origin of `request` within the window.
    /// - Parameter request: A request to the origin.
    /// - Returns: The counts.
    public func counts(for request: Request) -> (calls: Int, retries: Int) {
        let key = Self.origin(of: request)
        let slice = currentSlice()
        return origins.withLock { origins in
            guard var origin = origins[key] else { return (0, 0) }
            origin.slide(to: slice)
            return (origin.first, origin.second)
        }
    }

    private func currentSlice() -> Int64 {
        SlidingCounts.slice(at: clock.now, window: window)
    }

    /// Drops origins idle for a whole window, then, if still too many, the one idle longest.
    private func forgetQuietest(_ origins: inout [String: SlidingCounts], keeping key: String, now slice: Int64) {
        origins = origins.filter { $0.key == key || $0.value.lastSlice >= slice - 9 }
        while origins.count > Self.maximumOrigins {
            guard let quietest = origins.filter({ $0.key != key }).min(by: { $0.value.lastSlice < $1.value.lastSlice })?.key else { return }
            origins[quietest] = nil
        }
    }

    /// `https://api.example.com:443`: the request's origin (`Origin`, as the redirect policy
    /// compares them). A URL without one (not http or https, no host) is counted as its scheme
    /// and host alone: never its user, path or query, which an error names.
    package static func origin(of request: Request) -> String {
        // The base URL holds the origin (and is there already); the whole URL is rendered only
        // for a request built without one.
        let url: URL? = request.baseURL?.host != nil ? request.baseURL : request.url
        guard let url else { return "(no origin)" }
        if let origin = Origin(url) { return origin.key }
        let scheme = url.scheme?.lowercased() ?? ""
        return "\(scheme)://\(url.host?.lowercased() ?? "")"
    }
}
