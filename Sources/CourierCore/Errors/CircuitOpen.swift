#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Why a call failed at once: the circuit breaker for its origin is open
/// (``CourierError/Cause/circuitOpen(_:)``).
public struct CircuitOpen: Sendable, Hashable, CustomStringConvertible {
    /// The origin: `https://api.example.com:443`.
    public var origin: String
    /// How long until the breaker lets a trial call through; `nil` when it is half open and its
    /// trial calls are under way (the next call may go once they end).
    public var retryAfter: Duration?

    /// Creates the reason.
    /// - Parameters:
    ///   - origin: The origin.
    ///   - retryAfter: How long until a trial call may go.
    public init(origin: String, retryAfter: Duration?) {
        self.origin = origin
        self.retryAfter = retryAfter
    }

    /// For example `the circuit breaker for https://api.test:443 is open after repeated failures;
    /// it lets a trial call through in 12.5 s`.
    public var description: String {
        guard let retryAfter else {
            return "the circuit breaker for \(origin) is half open and its trial calls are under way; try again when they end"
        }
        let seconds = (retryAfter.seconds * 10).rounded(.up) / 10
        return "the circuit breaker for \(origin) is open after repeated failures; it lets a trial call through in \(seconds) s"
    }
}
