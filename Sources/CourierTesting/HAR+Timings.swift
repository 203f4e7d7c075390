import CourierCore
import CourierResilience

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension HAR.Timings {
    /// A hop's timings as HAR's phases, which follow one another: `blocked` (the `before`
    /// seconds from the recorder's start to the hop's, plus waiting for a connection), `dns`,
    /// `connect` (TCP and TLS: HAR counts `ssl` inside it), `send`, `wait` and `receive`. A phase
    /// the transport did not report is `-1` (before the request) or `0` (after it).
    /// - Parameters:
    ///   - hop: The hop's timings.
    ///   - before: Seconds between the recorder's start and the hop's.
    ///   - elapsed: The time from the recorder's start to the end of the exchange, which ends
    ///     `receive` when the body's end was not recorded.
    init(_ hop: HopTimings, startedBy before: TimeInterval, elapsed: Duration) {
        let lead = Duration.seconds(max(0, before))
        let ms = Self.milliseconds
        // The end of the hop, on the hop's clock.
        let end = max(.zero, elapsed - lead)
        let setUp = [hop.queued, hop.dns, hop.connect, hop.tls].compactMap { $0?.end }.max() ?? .zero
        let sendStart = hop.requestStarted ?? setUp
        // A hop that failed before its answer received nothing; one that failed before its
        // request started (refused, a bad certificate) waited for nothing either.
        let failedBeforeAnswer = hop.failedAt != nil && hop.firstByte == nil
        let first = hop.firstByte ?? (failedBeforeAnswer && hop.requestStarted == nil ? sendStart : (hop.failedAt ?? end))
        let sent = min(hop.requestSent ?? sendStart, first)
        self.init(
            send: ms(max(.zero, sent - sendStart)), wait: ms(max(.zero, first - max(sent, sendStart))),
            receive: failedBeforeAnswer ? 0 : ms(max(.zero, (hop.bodyEnded ?? hop.failedAt ?? end) - first)))
        blocked = ms(lead + (hop.queued?.duration ?? .zero))
        dns = hop.dns.map { ms($0.duration) } ?? -1
        ssl = hop.tls.map { ms($0.duration) } ?? -1
        if hop.connect != nil || hop.tls != nil {
            connect = ms((hop.connect?.duration ?? .zero) + (hop.tls?.duration ?? .zero))
        } else {
            connect = -1
        }
    }

    /// The sum of the known phases (`ssl` is inside `connect`), as HAR defines an entry's `time`.
    var total: Double {
        let phases = [blocked, dns, connect].compactMap { $0 }.filter { $0 > 0 } + [send, wait, receive]
        return (phases.reduce(0, +) * 1000).rounded() / 1000
    }

    /// `duration` in milliseconds, to the microsecond.
    static func milliseconds(_ duration: Duration) -> Double {
        let milliseconds = max(0, Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15)
        return (milliseconds * 1000).rounded() / 1000
    }
}
