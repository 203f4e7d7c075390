#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Why a call failed at once: the rate limit its origin announced would have kept it waiting
/// too long (``CourierError/Cause/rateLimited(_:)``).
public struct RateLimited: Sendable, Hashable, CustomStringConvertible {
    /// The origin: `https://api.example.com:443`.
    public var origin: String
    /// How long until the origin takes calls again, as it announced.
    public var retryAfter: Duration

    /// Creates the reason.
    /// - Parameters:
    ///   - origin: The origin.
    ///   - retryAfter: How long until a call may go.
    public init(origin: String, retryAfter: Duration) {
        self.origin = origin
        self.retryAfter = retryAfter
    }

    /// For example `https://api.test:443 is rate limited for another 42.0 s, longer than the
    /// pacing waits`.
    public var description: String {
        let seconds = (retryAfter.seconds * 10).rounded(.up) / 10
        return "\(origin) is rate limited for another \(seconds) s, longer than the pacing waits"
    }
}
