extension ManualClock {
    /// What a sleeper on the clock waits for, as the piece of Courier that sleeps says: a retry's
    /// backoff, an attempt's time limit, the idle timer, a stub's delay… A test waits for the
    /// sleeper it means (``ManualClock/waitForSleepers(_:of:timeout:)``) and moves the clock to
    /// its wake-up (``ManualClock/advanceToNextWakeUp(of:)``), however many other pieces sleep on
    /// the same clock.
    ///
    /// Code of your own labels its sleeps with ``ManualClock/labelling(_:_:)``.
    public struct SleepKind: Hashable, Sendable, CustomStringConvertible {
        /// The kind's name.
        public let name: String

        /// A kind of your own.
        /// - Parameter name: Its name.
        public init(_ name: String) { self.name = name }

        /// ``RetryMiddleware``'s wait before the next attempt.
        public static let retryBackoff = SleepKind("retry backoff")
        /// An attempt's time limit (``AttemptTimeoutMiddleware``, ``RetryPolicy/attemptTimeout``).
        public static let attemptTimeout = SleepKind("attempt timeout")
        /// The idle timers of requests' ``Request/timeout`` (one sleeper watches them all).
        public static let idleTimeout = SleepKind("idle timeout")
        /// A ``Stub``'s delay, or the wait before a streamed stub's chunk.
        public static let stubDelay = SleepKind("stub delay")
        /// ``HedgingMiddleware``'s wait before a hedge.
        public static let hedgeDelay = SleepKind("hedge delay")
        /// ``ServerPacing``'s wait for a rate limit's reset.
        public static let pacing = SleepKind("pacing")
        /// ``FaultInjection``'s latency.
        public static let injectedLatency = SleepKind("injected latency")
        /// An ``EventSource``'s wait before it reconnects.
        public static let reconnect = SleepKind("reconnect")
        /// A WebSocket's wait before its next keep-alive ping, or for the pong (CourierWebSocket).
        public static let webSocketPing = SleepKind("WebSocket ping")
        /// A WebSocket's wait for the peer's close frame after its own (CourierWebSocket).
        public static let webSocketClose = SleepKind("WebSocket close")
        /// A sleep nobody labelled.
        public static let unlabelled = SleepKind("unlabelled")

        /// The name.
        public var description: String { name }
    }

    /// The kind the current task's sleeps on a manual clock are labelled with.
    @TaskLocal static var currentKind: SleepKind?

    /// Runs `operation` with its sleeps on any ``ManualClock`` labelled `kind`, so that a test can
    /// wait for them by kind.
    /// - Parameters:
    ///   - kind: The label.
    ///   - operation: The code that sleeps.
    /// - Returns: What `operation` returns.
    public static func labelling<Value: Sendable>(_ kind: SleepKind, _ operation: () async throws -> Value) async rethrows -> Value {
        try await $currentKind.withValue(kind, operation: operation)
    }
}

/// Sleeps on `clock` for `delay`, labelled `kind` when the clock is a ``ManualClock`` (any other
/// clock sleeps as it is, with no task-local to set).
package func sleep<C: Clock>(on clock: C, for delay: C.Duration, as kind: ManualClock.SleepKind) async throws {
    guard clock is ManualClock else { return try await clock.sleep(for: delay) }
    try await ManualClock.$currentKind.withValue(kind) { try await clock.sleep(for: delay) }
}
