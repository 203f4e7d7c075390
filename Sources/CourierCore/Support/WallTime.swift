#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Wall-clock time read from a `Clock`: the date it started at plus the clock's time since. The
/// cookie store and the HTTP cache use it so that a test's ``ManualClock`` moves their dates.
package struct WallTime: Sendable {
    private let clock: ElapsedClock
    private let start: Date

    /// - Parameters:
    ///   - clock: The clock to read.
    ///   - start: The date the clock's present stands for.
    package init(clock: some Clock<Duration>, start: Date) {
        self.clock = ElapsedClock(clock)
        self.start = start
    }

    /// The current date.
    package var now: Date {
        let elapsed = clock.now.components
        return start.addingTimeInterval(TimeInterval(elapsed.seconds) + TimeInterval(elapsed.attoseconds) / 1e18)
    }
}
