#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Two counts over a sliding window kept as its last ten tenths ("slices"): the calls and
/// retries of a ``RetryBudget``, the calls and failures of a ``CircuitBreaker``. A slice older
/// than the window is dropped; memory is at most ten slices.
package struct SlidingCounts {
    private struct Slice {
        var index: Int64
        var first: Int
        var second: Int
    }

    private var slices: [Slice] = []
    /// The newest slice anything was added to (how recently the counts were used).
    package private(set) var lastSlice: Int64 = 0

    package init() {}

    /// The slice `elapsed` falls in, for a window of `window` (saturating, never negative).
    package static func slice(at elapsed: Duration, window: Duration) -> Int64 {
        let length = window.seconds / 10
        guard length > 0 else { return 0 }
        return Int64(Swift.min(Swift.max(0, elapsed.seconds / length), Double(Int64.max / 2)))
    }

    /// Drops the slices more than a window older than `slice`.
    package mutating func slide(to slice: Int64) {
        slices.removeAll { $0.index < slice - 9 }
    }

    /// Adds to the counts of `slice` (the newest).
    package mutating func add(first: Int = 0, second: Int = 0, in slice: Int64) {
        if let last = slices.indices.last, slices[last].index == slice {
            slices[last].first += first
            slices[last].second += second
        } else {
            slices.append(Slice(index: slice, first: first, second: second))
        }
        lastSlice = slice
    }

    /// Forgets every count.
    package mutating func reset() { slices = [] }

    /// The first count over the kept slices.
    package var first: Int { slices.reduce(0) { $0 + $1.first } }
    /// The second count over the kept slices.
    package var second: Int { slices.reduce(0) { $0 + $1.second } }
}
