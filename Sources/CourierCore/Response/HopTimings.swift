#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Where the time of one hop went: waiting for a connection, resolving the host, connecting,
/// the TLS handshake, sending the request, waiting for the first byte of the answer and reading
/// its body, and which connection carried it.
///
/// Every time is an offset from the moment the transport was handed the hop (``startedAt``), on
/// a monotonic clock. A transport reports what it sees (a phase it did not go through, such as
/// connecting on a reused connection, or one its library hides, stays `nil`): CourierNIO reports
/// every phase; the URLSession and AsyncHTTPClient transports report what their libraries tell
/// them, and the exchange fills ``firstByte`` (the head handed over) and ``bodyEnded`` (a body
/// in hand) for any transport that does not.
///
/// A hop's timings are recorded when something reads them: an exchange with
/// ``Exchange/recordsTimings`` on, or with a middleware that is a ``HopTimingsObserver``
/// (``HARRecorder``, and CourierMetrics' and CourierTracing's middleware). Read them from
/// ``StreamedResponse/timings``: the head's phases at once, ``bodyEnded`` once the body has
/// ended.
///
/// ```swift
/// let response = try await executor.recordingTimings().stream(.get |> url(feed))
/// if let timings = response.timings { print(timings) }
/// // over CourierNIO: dns 0.41 ms, connect 0.12 ms, tls 3.02 ms, request started at 3.7 ms,
/// // request sent at 3.72 ms, first byte at 5.1 ms; new connection, h2, to 127.0.0.1:8443
/// ```
public struct HopTimings: Sendable, Hashable, CustomStringConvertible {
    /// A phase with a start and an end, as offsets from ``HopTimings/startedAt``.
    public struct Interval: Sendable, Hashable {
        /// When the phase began.
        public var start: Duration
        /// When the phase ended (never before ``start``).
        public var end: Duration
        /// How long the phase took.
        public var duration: Duration { end - start }

        /// Creates an interval; an `end` before `start` counts as `start`.
        /// - Parameters:
        ///   - start: When the phase began.
        ///   - end: When it ended.
        public init(start: Duration, end: Duration) {
            self.start = start
            self.end = Swift.max(start, end)
        }
    }

    /// A phase of a hop that takes time before the request can be written.
    public enum Phase: String, Sendable, Hashable, CaseIterable {
        /// Waiting for a connection: the pool's limit per host was reached, or another hop's
        /// connection (an HTTP/2 one to share) was being opened.
        case queued
        /// Resolving the host's name to addresses.
        case dns
        /// Opening the connection: TCP, and a proxy's tunnel when there is one.
        case connect
        /// The TLS handshake, certificate and pin checks included.
        case tls
    }

    /// A moment of a hop.
    public enum Mark: String, Sendable, Hashable, CaseIterable {
        /// The transport began writing the request (it had its connection).
        case requestStarted
        /// The last byte of the request (its body included) was handed to the connection.
        case requestSent
        /// The response's head arrived.
        case firstByte
        /// The response's body ended (completely or not).
        case bodyEnded
    }

    /// Whether a hop opened its connection or reused one.
    public enum Connection: String, Sendable, Hashable {
        /// Opened for this hop.
        case new
        /// Opened earlier: kept alive after another hop, or an HTTP/2 connection shared with
        /// others.
        case reused
    }

    /// The wall-clock time the transport was handed the hop.
    public var startedAt: Date
    /// Waiting for a connection, when the hop had to.
    public var queued: Interval?
    /// Resolving the host, when the transport did (not on a reused connection).
    public var dns: Interval?
    /// Opening the connection (a proxy's tunnel included), when the transport did.
    public var connect: Interval?
    /// The TLS handshake, when the transport did one.
    public var tls: Interval?
    /// When the transport began writing the request.
    public var requestStarted: Duration?
    /// When the last byte of the request was handed to the connection (it may come after
    /// ``firstByte`` when a server answers before reading the whole upload).
    public var requestSent: Duration?
    /// When the response's head arrived: the time to first byte.
    public var firstByte: Duration?
    /// When the response's body ended; `nil` while it is still arriving.
    public var bodyEnded: Duration?
    /// When the hop failed (refused, a TLS failure, a timeout, a lost connection), on the timings
    /// a failure carries (``CourierError/timings``); a phase under way then ends there.
    public var failedAt: Duration?
    /// Whether the connection was opened for this hop or reused.
    public var connection: Connection?
    /// The protocol spoken, as ALPN names it: `http/1.1` or `h2`.
    public var negotiatedProtocol: String?
    /// The address the connection reached (the proxy's, through a proxy), for example
    /// `127.0.0.1:8443` or `[::1]:443`.
    public var remoteAddress: String?

    /// The HTTP version of ``negotiatedProtocol`` as OpenTelemetry's `network.protocol.version`
    /// writes it: `1.1` for `http/1.1`, `2` for `h2`, `3` for `h3`; `nil` when not known.
    public var httpVersion: String? {
        switch negotiatedProtocol?.lowercased() {
        case "http/1.1": "1.1"
        case "http/1.0": "1.0"
        case "h2", "h2c": "2"
        case "h3": "3"
        default: nil
        }
    }

    /// Creates timings with nothing recorded yet.
    /// - Parameter startedAt: The wall-clock time the hop began.
    public init(startedAt: Date = Date()) {
        self.startedAt = startedAt
    }

    /// The interval of `phase`, if the hop went through it.
    public subscript(phase: Phase) -> Interval? {
        get {
            switch phase {
            case .queued: queued
            case .dns: dns
            case .connect: connect
            case .tls: tls
            }
        }
        set {
            switch phase {
            case .queued: queued = newValue
            case .dns: dns = newValue
            case .connect: connect = newValue
            case .tls: tls = newValue
            }
        }
    }

    /// The offset of `mark`, if it was recorded.
    public subscript(mark: Mark) -> Duration? {
        get {
            switch mark {
            case .requestStarted: requestStarted
            case .requestSent: requestSent
            case .firstByte: firstByte
            case .bodyEnded: bodyEnded
            }
        }
        set {
            switch mark {
            case .requestStarted: requestStarted = newValue
            case .requestSent: requestSent = newValue
            case .firstByte: firstByte = newValue
            case .bodyEnded: bodyEnded = newValue
            }
        }
    }

    /// The wall-clock time of an offset of this hop.
    /// - Parameter offset: An offset from ``startedAt``.
    /// - Returns: ``startedAt`` plus `offset`.
    public func date(at offset: Duration) -> Date {
        startedAt.addingTimeInterval(offset.seconds)
    }

    /// The phases and moments recorded, in milliseconds, then the connection: for example
    /// `queued 0.02 ms, dns 0.41 ms, connect 0.12 ms, tls 3.02 ms, request sent at 3.72 ms, first
    /// byte at 5.10 ms, body ended at 5.31 ms; new connection, h2, to 127.0.0.1:8443`.
    public var description: String {
        var parts: [String] = []
        for phase in Phase.allCases {
            if let interval = self[phase] { parts.append("\(phase.rawValue) \(Self.milliseconds(interval.duration))") }
        }
        let marks: [(Mark, String)] = [
            (.requestStarted, "request started"), (.requestSent, "request sent"), (.firstByte, "first byte"), (.bodyEnded, "body ended"),
        ]
        for (mark, name) in marks {
            if let offset = self[mark] { parts.append("\(name) at \(Self.milliseconds(offset))") }
        }
        if let failedAt { parts.append("failed at \(Self.milliseconds(failedAt))") }
        var text = parts.isEmpty ? "nothing recorded" : parts.joined(separator: ", ")
        var connectionParts: [String] = []
        if let connection { connectionParts.append("\(connection.rawValue) connection") }
        if let negotiatedProtocol { connectionParts.append(negotiatedProtocol) }
        if let remoteAddress { connectionParts.append("to \(remoteAddress)") }
        if !connectionParts.isEmpty { text += "; " + connectionParts.joined(separator: ", ") }
        return text
    }

    private static func milliseconds(_ duration: Duration) -> String {
        let value = duration.seconds * 1000
        return "\((value * 100).rounded() / 100) ms"
    }
}
