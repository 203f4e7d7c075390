import Foundation

/// Wall-clock time read from a `Clock`: the date it started at plus the clock's time since. The
/// cookie store and the HTTP cache use it so that a test's ``ManualClock`` moves their dates.
struct WallTime: Sendable {
    private let read: @Sendable () -> Date

    /// - Parameters:
    ///   - clock: The clock to read.
    ///   - start: The date the clock's present stands for.
    init(clock: some Clock<Duration>, start: Date) {
        let origin = clock.now
        read = {
            let elapsed = origin.duration(to: clock.now).components
            return start.addingTimeInterval(TimeInterval(elapsed.seconds) + TimeInterval(elapsed.attoseconds) / 1e18)
        }
    }

    /// The current date.
    var now: Date { read() }
}
