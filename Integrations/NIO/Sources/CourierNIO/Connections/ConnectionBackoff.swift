import NIOCore

/// How long an origin whose connection failed is left alone before the next attempt: exponential
/// from ``initial`` (doubling with each failure in a row, up to ``maximum``), with "equal jitter"
/// (each delay somewhere between half and all of its step), so that many clients refused by one
/// restarting server do not come back at the same instant. A connection made resets it.
///
/// While an origin backs off, a hop that finds no connection to use fails at once with the last
/// failure (transient, as it was: a ``/Courier/RetryMiddleware`` waits its own delay and tries
/// again) instead of trying the refused port again: a dead origin costs one attempt per delay,
/// however many hops ask for it, as gRPC's subchannels and AsyncHTTPClient's pool do.
public struct ConnectionBackoff: Sendable, Hashable {
    /// The delay after the first failure. Default 100 ms.
    public var initial: Duration
    /// The longest delay. Default 5 s.
    public var maximum: Duration

    /// Creates a backoff.
    /// - Parameters:
    ///   - initial: The delay after the first failure (negative counts as zero).
    ///   - maximum: The longest delay (never less than `initial`).
    public init(initial: Duration = .milliseconds(100), maximum: Duration = .seconds(5)) {
        self.initial = max(.zero, initial)
        self.maximum = max(self.initial, maximum)
    }

    /// No backoff: every hop may try to connect at once (what CourierNIO did before it had one).
    public static let none = ConnectionBackoff(initial: .zero, maximum: .zero)

    /// The delay after `failures` failures in a row (at least 1), `jitter` (0 to 1) picking where
    /// in the upper half of its step it falls.
    func delay(afterFailures failures: Int, jitter: Double) -> TimeAmount {
        let start = Double(TimeAmount(initial).nanoseconds)
        let cap = Double(TimeAmount(maximum).nanoseconds)
        // 2^(failures - 1), without overflow for any count.
        let step = min(cap, start * Double(sign: .plus, exponent: min(max(failures, 1) - 1, 64), significand: 1))
        let jitter = jitter.isFinite ? min(max(jitter, 0), 1) : 1
        return .nanoseconds(Int64(step / 2 + step / 2 * jitter))
    }
}
