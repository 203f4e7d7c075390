#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension Request {
    /// The longest timeout or deadline Courier hands to a clock or a transport: 365 days.
    ///
    /// ``timeout`` and ``deadline`` accept any positive, finite number of seconds; a longer value
    /// is clamped to this one when the request is sent. A year means "no limit" in practice, and
    /// the platforms' timers overflow on larger values (FoundationNetworking multiplies the
    /// timeout by 1,000 into an `Int`; `Duration` arithmetic traps past about 10¹¹ s).
    public static let maximumInterval: TimeInterval = 365 * 24 * 60 * 60

    /// ``timeout`` as a transport enforces it: clamped to ``maximumInterval``, `nil` when unset
    /// (or not a positive, finite number, which validation reports). Courier's timeout is an idle
    /// timeout: the longest wait for the head or for the next bytes of a body, each hop anew.
    public var effectiveTimeout: TimeInterval? {
        guard let timeout, timeout > 0, timeout.isFinite else { return nil }
        return Swift.min(timeout, Self.maximumInterval)
    }

    /// ``deadline`` as ``Executor/send(_:)-(Request)`` and ``Executor/stream(_:options:)`` enforce
    /// it (transports need not): clamped to ``maximumInterval``, `nil` when unset or invalid.
    public var effectiveDeadline: TimeInterval? {
        guard let deadline, deadline > 0, deadline.isFinite else { return nil }
        return Swift.min(deadline, Self.maximumInterval)
    }
}
