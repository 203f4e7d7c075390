#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension HopTimings {
    /// Where a transport writes the timings of one hop, from whichever thread sees each phase
    /// (an event loop, a delegate queue, a task). The exchange makes one per hop when something
    /// reads the timings and hands it to the transport in ``StreamOptions/timings``; a transport
    /// that finds it `nil` records nothing.
    ///
    /// ```swift
    /// options.timings?.begin(.connect)
    /// let channel = try await connect()
    /// options.timings?.end(.connect)
    /// options.timings?.connection(.new, protocol: "http/1.1", remoteAddress: "127.0.0.1:8080")
    /// ```
    ///
    /// A phase begun again (a second address tried) starts over; a mark keeps its first time
    /// (the first byte is the first one); an end without its beginning is ignored. Times before
    /// the recorder was made count as its start.
    public final class Recorder: Sendable {
        private let start: ContinuousClock.Instant
        private let state: Locked<HopTimings>

        /// Creates a recorder for a hop that starts now.
        public init() {
            self.start = .now
            self.state = Locked(HopTimings(startedAt: Date()))
        }

        /// The timings recorded so far.
        public var timings: HopTimings { state.withLock { $0 } }

        /// The timings of a hop that failed now: the moment it failed, and a phase begun and not
        /// ended (the connect a refusal stopped, the handshake a bad certificate did) ending then.
        package func failed(at instant: ContinuousClock.Instant = .now) -> HopTimings {
            let offset = self.offset(of: instant)
            return state.withLock { timings in
                for phase in Phase.allCases {
                    if let interval = timings[phase], interval.end == interval.start {
                        timings[phase] = Interval(start: interval.start, end: max(interval.start, offset))
                    }
                }
                if timings.failedAt == nil { timings.failedAt = offset }
                return timings
            }
        }

        /// Records that `phase` began.
        /// - Parameters:
        ///   - phase: The phase.
        ///   - instant: When; now by default.
        public func begin(_ phase: Phase, at instant: ContinuousClock.Instant = .now) {
            let offset = self.offset(of: instant)
            state.withLock { $0[phase] = Interval(start: offset, end: offset) }
        }

        /// Records that `phase` ended; ignored when it was not begun.
        /// - Parameters:
        ///   - phase: The phase.
        ///   - instant: When; now by default.
        public func end(_ phase: Phase, at instant: ContinuousClock.Instant = .now) {
            let offset = self.offset(of: instant)
            state.withLock { timings in
                guard let interval = timings[phase] else { return }
                timings[phase] = Interval(start: interval.start, end: offset)
            }
        }

        /// Records `mark`, unless it was recorded already.
        /// - Parameters:
        ///   - mark: The moment.
        ///   - instant: When; now by default.
        public func mark(_ mark: Mark, at instant: ContinuousClock.Instant = .now) {
            let offset = self.offset(of: instant)
            state.withLock { timings in
                if timings[mark] == nil { timings[mark] = offset }
            }
        }

        /// Records the connection that carries the hop; a `nil` leaves what was recorded.
        /// - Parameters:
        ///   - use: Whether it was opened for this hop or reused.
        ///   - protocol: The protocol spoken, as ALPN names it (`http/1.1`, `h2`).
        ///   - remoteAddress: The address reached.
        public func connection(_ use: Connection?, protocol: String? = nil, remoteAddress: String? = nil) {
            state.withLock { timings in
                if let use { timings.connection = use }
                if let `protocol` { timings.negotiatedProtocol = `protocol` }
                if let remoteAddress { timings.remoteAddress = remoteAddress }
            }
        }

        private func offset(of instant: ContinuousClock.Instant) -> Duration {
            Swift.max(.zero, instant - start)
        }
    }
}
