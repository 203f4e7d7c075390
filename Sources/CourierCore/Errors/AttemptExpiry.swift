/// The time limit of the attempt the current task is making, as the ``AttemptTimeoutMiddleware``
/// around it set it (``RetryPolicy/attemptTimeout`` uses one too), and whether it ran out.
///
/// When the limit runs out, the attempt is stopped by cancelling it, and middleware inside it
/// (a ``CircuitBreaker``, logging, metrics, a HAR recording) would see a cancellation, which they
/// do not count. So the middleware marks the attempt expired first, and
/// ``CourierError/wrapping(_:request:)`` (which every piece uses to read a failure) turns a
/// cancellation in an expired attempt into the ``CourierError/Cause/timedOut`` it is, wherever
/// the limit was configured.
package final class AttemptExpiry: Sendable {
    /// The innermost attempt of the current task, if any.
    @TaskLocal package static var current: AttemptExpiry?

    /// The attempt's limit.
    package let limit: Duration
    /// The attempt this one runs inside (an outer limit running out stops this one too).
    package let outer: AttemptExpiry?
    private let ran = Locked(false)

    package init(limit: Duration, outer: AttemptExpiry?) {
        self.limit = limit
        self.outer = outer
    }

    /// Marks the limit as run out (before the attempt is cancelled).
    package func expire() { ran.withLock { $0 = true } }

    /// The limit that ran out, this attempt's or an outer one's, if any.
    package var expired: AttemptExpiry? {
        ran.withLock { $0 } ? self : outer?.expired
    }

    /// The timeout a cancellation in the current task stands for, when an attempt's limit ran
    /// out.
    package static var timeoutForCancellation: CourierError.Timeout? {
        current?.expired.map { CourierError.Timeout(.attempt, limit: $0.limit) }
    }
}
