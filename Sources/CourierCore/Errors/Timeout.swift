extension CourierError {
    /// A ``Cause/timedOut`` error that says which limit fired.
    /// - Parameters:
    ///   - timeout: The limit.
    ///   - request: The request it stopped.
    /// - Returns: The error.
    package static func timedOut(_ timeout: Timeout, request: Request?) -> CourierError {
        var error = CourierError(.timedOut, request: request)
        error.timeout = timeout
        return error
    }
}

extension CourierError {
    /// Which time limit stopped a call, and how long it was: carried by a
    /// ``CourierError/Cause/timedOut`` error as ``CourierError/timeout``, and said in its
    /// message ("the request timed out: nothing was received for 30 s (the request's idle
    /// timeout)").
    ///
    /// Each limit is a different fix: an idle timeout that fires on a slow export wants a longer
    /// ``Request/timeout``, an attempt timeout that fires is what a retry is for, a connect timeout
    /// points at the network, a wait for the pool at its connection limit.
    public struct Timeout: Sendable, Hashable, CustomStringConvertible {
        /// The kind of limit. Kinds are added in minor releases: match with a `default:`.
        #if hasAttribute(nonexhaustive)
            @nonexhaustive
        #endif
        public enum Kind: String, Sendable, Hashable {
            /// The request's idle timeout (``Request/timeout``): nothing was sent or received
            /// for that long, before the head or between bytes of the body.
            case idle
            /// The call's deadline (``Request/deadline``), retries and redirects included.
            case deadline
            /// One attempt's time to its response head (``RetryPolicy/attemptTimeout`` or
            /// ``AttemptTimeoutMiddleware``).
            case attempt
            /// The transport's limit on making a connection (DNS, TCP and TLS).
            case connect
            /// The transport's limit on waiting for a free connection from its pool.
            case poolWait
            /// A timeout ``FaultInjection`` made up.
            case injected
            /// A timeout the platform reported without saying which of its limits it was.
            case unspecified
        }

        /// Which limit fired.
        public var kind: Kind
        /// How long the limit was, when it is known.
        public var limit: Duration?

        /// Creates a description of a limit that fired.
        /// - Parameters:
        ///   - kind: Which limit.
        ///   - limit: How long it was, when known.
        public init(_ kind: Kind, limit: Duration?) {
            self.kind = kind
            self.limit = limit
        }

        /// What happened, in words: which limit, after how long.
        public var description: String {
            let length = limit.map(Self.format)
            switch kind {
            case .idle:
                return "nothing was received for \(length ?? "the request's timeout") (the request's idle timeout)"
            case .deadline:
                return "the call's deadline\(length.map { " of \($0)" } ?? "") passed, retries and redirects included"
            case .attempt:
                return "the attempt had no response head within \(length ?? "its limit") (the attempt timeout)"
            case .connect:
                return "no connection was made within \(length ?? "the transport's limit") (the connect timeout)"
            case .poolWait:
                return "no connection of the pool was free within \(length ?? "the transport's limit") (the pool's wait)"
            case .injected:
                return "a timeout injected by FaultInjection"
            case .unspecified:
                return "the transport gave up waiting\(length.map { " after \($0)" } ?? "")"
            }
        }

        /// A duration as people write it: `30 s`, `250 ms`, `1.5 s`.
        static func format(_ duration: Duration) -> String {
            let seconds = duration.seconds
            guard seconds.isFinite, seconds >= 0, seconds < 1e12 else { return "\(duration)" }
            if seconds < 1 {
                let milliseconds = (seconds * 1000).rounded()
                return milliseconds >= 1 ? "\(Int(milliseconds)) ms" : "\(Int((seconds * 1_000_000).rounded())) µs"
            }
            let tenths = (seconds * 10).rounded() / 10
            return tenths == tenths.rounded() ? "\(Int(tenths)) s" : "\(tenths) s"
        }
    }
}
