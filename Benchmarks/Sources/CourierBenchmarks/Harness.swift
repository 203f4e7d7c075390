import Foundation

/// Keeps a value alive so the optimiser cannot drop the work that made it.
@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}

/// The median of some numbers.
func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// Nanoseconds per call of `body`, measured over `iterations` calls.
func nanosecondsPerCall(iterations: Int, _ body: () throws -> Void) rethrows -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    for _ in 0..<iterations { try body() }
    let elapsed = clock.now - start
    return (Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9) / Double(iterations)
}

/// Async variant of ``nanosecondsPerCall(iterations:_:)``.
func nanosecondsPerCall(iterations: Int, _ body: () async throws -> Void) async rethrows -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    for _ in 0..<iterations { try await body() }
    let elapsed = clock.now - start
    return (Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9) / Double(iterations)
}

/// A comparison of Courier against its hand-written twin, measured in alternating runs.
struct Comparison {
    var name: String
    var unit: String
    var courier: [Double] = []
    var baseline: [Double] = []
    /// Whether larger is better (throughput) rather than smaller (time).
    var higherIsBetter = false
    var target: String
    var extra: String = ""

    /// Courier ÷ baseline per run, then the median: the noise of a shared machine affects both
    /// halves of a run alike.
    var ratio: Double { median(zip(courier, baseline).map { $0 / $1 }) }

    func row() -> String {
        let format = { (value: Double) in String(format: value >= 100 ? "%.0f" : "%.2f", value) }
        return "| \(name) | \(format(median(courier))) \(unit) | \(format(median(baseline))) \(unit) | "
            + String(format: "%.3f", ratio) + " | \(target) |\(extra.isEmpty ? "" : " \(extra)")"
    }
}

/// Resident memory of this process, from /proc (Linux) — `nil` elsewhere.
func residentMegabytes(field: String = "VmRSS") -> Double? {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
    for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
        let digits = line.split(separator: " ").dropFirst().first.flatMap { Double($0) }
        return digits.map { $0 / 1024 }
    }
    return nil
}

/// User plus system CPU time of this process, in seconds.
func cpuSeconds() -> Double {
    var usage = rusage()
    #if os(Linux)
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    #else
        getrusage(RUSAGE_SELF, &usage)
    #endif
    let user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
    let system = Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    return user + system
}
