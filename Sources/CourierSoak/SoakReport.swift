import Foundation

/// What a soak saw: calls completed, failures by cause (injected and not), resources sampled
/// while the traffic ran, and throughput over time; ``problems`` says which checks failed.
public struct SoakReport: Sendable, CustomStringConvertible {
    /// The transport's name.
    public var transport: String
    /// How the soak ran.
    public var configuration: SoakConfiguration
    /// Calls completed (well or not), by operation.
    public var completed: [SoakOperation: Int]
    /// Failures the traffic asked for, by `operation: errorType`.
    public var injected: [String: Int]
    /// Any other failure, by `operation: errorType`: a soak that passes has none.
    public var unexpected: [String: Int]
    /// The first few unexpected failures, described (secrets redacted, as every error is).
    public var examples: [String]
    /// Observations that are not failures, counted (a resume that kept fewer bytes than arrived).
    public var notes: [String: Int] = [:]
    /// Memory and file descriptors, at the start and every second.
    public var samples: [ProcessSample]
    /// Calls finished in each whole second since the start.
    var completionsPerSecond: [Int]

    init(
        transport: String, configuration: SoakConfiguration, completed: [SoakOperation: Int], injected: [String: Int],
        unexpected: [String: Int], examples: [String], samples: [ProcessSample], completionsPerSecond: [Int]
    ) {
        self.transport = transport
        self.configuration = configuration
        self.completed = completed
        self.injected = injected
        self.unexpected = unexpected
        self.examples = examples
        self.samples = samples
        self.completionsPerSecond = completionsPerSecond
    }

    /// All calls completed.
    public var totalCompleted: Int { completed.values.reduce(0, +) }

    /// Calls completed in each window after the warm-up: whole minutes for runs of three minutes
    /// or more, whole sample intervals for shorter ones.
    public var throughput: (window: Double, counts: [Int]) {
        let duration = Double(configuration.duration.components.seconds)
        let warmUp = Double(configuration.warmUp.components.seconds)
        let window = duration >= 180 ? 60 : max(1, Double(configuration.sampleInterval.components.seconds))
        let windows = Int((duration - warmUp) / window)
        guard windows > 0 else { return (window, []) }
        var counts = Array(repeating: 0, count: windows)
        for (second, count) in completionsPerSecond.enumerated() where Double(second) >= warmUp {
            let index = Int((Double(second) - warmUp) / window)
            if index < windows { counts[index] += count }
        }
        return (window, counts)
    }

    /// The window growth is measured over: a fifth of the time after the warm-up, at least 10 s.
    private var growthWindow: Double {
        max(10, (Double(configuration.duration.components.seconds) - Double(configuration.warmUp.components.seconds)) / 5)
    }

    /// Growth of resident memory after the warm-up, as a fraction: the median of the samples in
    /// the last window over the median of those in the first window after the warm-up.
    public var memoryGrowth: Double? { growth(\.residentBytes) }
    /// Growth of the C heap's bytes in use (``ProcessSample/heapInUseBytes``) after the warm-up,
    /// measured as ``memoryGrowth`` is: reported beside it, to tell a leak (both grow) from an
    /// allocator that keeps what was freed (only resident memory grows).
    public var heapGrowth: Double? { growth(\.heapInUseBytes) }
    /// Growth of open file descriptors after the warm-up, measured as ``memoryGrowth`` is.
    public var fileGrowth: Double? { growth(\.openFiles) }

    private func growth(_ value: KeyPath<ProcessSample, Int?>) -> Double? {
        let warmUp = Double(configuration.warmUp.components.seconds)
        let duration = Double(configuration.duration.components.seconds)
        let first = samples.filter { $0.elapsed >= warmUp - 0.5 && $0.elapsed <= warmUp + growthWindow }.compactMap { $0[keyPath: value] }
        let last = samples.filter { $0.elapsed >= duration - growthWindow - 0.5 }.compactMap { $0[keyPath: value] }
        guard let before = median(first), let after = median(last), before > 0, samples.count > 2 else { return nil }
        return (after - before) / before
    }

    private func median(_ values: [Int]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? Double(sorted[middle]) : Double(sorted[middle - 1] + sorted[middle]) / 2
    }

    /// Whether the run is long enough to judge growth: five minutes or more after the warm-up.
    /// Before that, resident memory is still climbing to the allocator's high-water mark for the
    /// bodies in flight (64 gathered 1 MiB bodies settle near 420 MiB on glibc after about 40 s),
    /// which a short run cannot tell from a leak; its growth is reported, not judged.
    public var judgesGrowth: Bool {
        Double(configuration.duration.components.seconds) - Double(configuration.warmUp.components.seconds) >= 300
    }

    /// The checks that failed: unexpected failures, and in runs long enough to judge
    /// (``judgesGrowth``) memory or descriptors that grew 5% or more after the warm-up and
    /// throughput that fell (the later half of the windows under 80% of the earlier half). A short
    /// run (CI's minute) reports growth and throughput without judging them: over a minute, a
    /// build starting beside it on a shared machine would pass for a fall in throughput.
    public var problems: [String] {
        var problems: [String] = []
        if !unexpected.isEmpty { problems.append("\(unexpected.values.reduce(0, +)) unexpected failures") }
        if totalCompleted == 0 { problems.append("no call completed") }
        if judgesGrowth {
            if let growth = memoryGrowth, growth >= 0.05 { problems.append("resident memory grew \(percent(growth)) after the warm-up") }
            if let growth = fileGrowth, growth >= 0.05 { problems.append("open file descriptors grew \(percent(growth)) after the warm-up") }
        }
        let counts = throughput.counts
        if judgesGrowth, counts.count >= 2 {
            let half = counts.count / 2
            let early = Double(counts.prefix(half).reduce(0, +)) / Double(half)
            let late = Double(counts.suffix(half).reduce(0, +)) / Double(half)
            if late < 0.8 * early { problems.append("throughput fell from \(Int(early)) to \(Int(late)) per window") }
        }
        return problems
    }

    /// Whether every check passed.
    public var passed: Bool { problems.isEmpty }

    /// The report as Markdown-friendly text.
    public var description: String {
        let seconds = Double(configuration.duration.components.seconds)
        // One line at a time: an array literal of concatenations and closures costs the type
        // checker over 100,000 solver scopes (the CI budget is per expression).
        let perSecond = String(format: "%.0f", Double(totalCompleted) / seconds)
        let byKind: String = completed.sorted { $0.key < $1.key }.map { "\($0.key.rawValue) \($0.value)" }.joined(separator: ", ")
        var lines: [String] = []
        lines.append("soak: \(transport), \(Int(seconds)) s at concurrency \(configuration.concurrency), seed \(configuration.seed)")
        lines.append("completed: \(totalCompleted) (\(perSecond)/s): \(byKind)")
        lines.append("injected failures: \(Self.counts(injected))")
        lines.append("unexpected failures: \(Self.counts(unexpected))")
        lines += examples.map { "  e.g. \($0)" }
        if !notes.isEmpty { lines.append("notes: \(Self.counts(notes))") }
        let (window, counts) = throughput
        lines.append((judgesGrowth ? "" : "(reported, not judged) ") + "throughput per \(Int(window)) s after the warm-up: " + counts.map(String.init).joined(separator: " "))
        lines.append("samples (s, RSS MiB, heap in use MiB, open files, threads, completed):")
        let interval = max(1, Double(configuration.sampleInterval.components.seconds))
        for sample in samples where sample.elapsed < 0.5 || abs(sample.elapsed / interval - (sample.elapsed / interval).rounded()) * interval < 0.5 {
            let rss = sample.residentBytes.map(mebibytes) ?? "-"
            let heap = sample.heapInUseBytes.map(mebibytes) ?? "-"
            lines.append("  \(Int(sample.elapsed.rounded())) \(rss) \(heap) \(sample.openFiles.map(String.init) ?? "-") \(sample.threads.map(String.init) ?? "-") \(sample.completed)")
        }
        lines.append(
            (judgesGrowth ? "" : "(reported, not judged: under 5 minutes after the warm-up) ") + "growth after the \(Int(Double(configuration.warmUp.components.seconds))) s warm-up (medians of the first and last \(Int(growthWindow)) s): RSS \(memoryGrowth.map(percent) ?? "-"), heap in use \(heapGrowth.map(percent) ?? "-"), open files \(fileGrowth.map(percent) ?? "-")"
        )
        lines.append(passed ? "soak: \(transport) passed" : "soak: \(transport) FAILED: " + problems.joined(separator: "; "))
        return lines.joined(separator: "\n")
    }

    /// `"a 1, b 2"` in key order, or `"none"`.
    private static func counts(_ counts: [String: Int]) -> String {
        if counts.isEmpty { return "none" }
        return counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
    }

    private func percent(_ fraction: Double) -> String { String(format: "%+.1f%%", fraction * 100) }
    private func mebibytes(_ bytes: Int) -> String { String(format: "%.1f", Double(bytes) / 1_048_576) }
}
