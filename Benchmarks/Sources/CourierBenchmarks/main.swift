import Courier
import Foundation

// CourierBenchmarks [--url http://127.0.0.1:PORT] [--runs N] [--huge URL] [--profile KIND --count N] [--cache [--url U]] [--cookies [--row 9a|9b|9c|9d]]
// Prints a Markdown table: Courier vs its hand-written twin, measured in the same run.

let arguments = Array(CommandLine.arguments.dropFirst())
func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}
let runs = option("--runs").flatMap(Int.init) ?? 7

do {
    if let kind = option("--profile"), let count = option("--count").flatMap(Int.init) {
        // For `valgrind --tool=callgrind`: one synchronous workload, `count` times (see
        // InstructionProfiles). Benchmarks/run subtracts two counts to remove start-up cost.
        if kind == "exchange" || kind == "exchange-timeout" {
            try await InstructionProfiles.exchange(count: count, timed: kind == "exchange-timeout")
        } else {
            try InstructionProfiles.run(kind, count: count)
        }
        exit(0)
    }
    if let base = option("--delegate-only") {
        for comparison in try await LiveBenchmarks.delegateCost(base: base, runs: runs) { print(comparison.row()) }
        exit(0)
    }
    if let kind = option("--streaming"), let address = option("--address") {
        // One measurement per process (Benchmarks/run starts each in a fresh one), printed as JSON.
        let directory = option("--directory") ?? NSTemporaryDirectory()
        let measurement: StreamingBenchmarks.Measurement
        switch kind {
        case "stream": measurement = try await StreamingBenchmarks.courierStream(address)
        case "stream-raw": measurement = try await StreamingBenchmarks.rawStream(address)
        case "download": measurement = try await StreamingBenchmarks.courierDownload(address, directory: directory)
        case "download-raw": measurement = try await StreamingBenchmarks.rawDownload(address, directory: directory)
        default: throw CocoaError(.featureUnsupported)
        }
        print(String(decoding: try JSONEncoder().encode(measurement), as: UTF8.self))
        exit(0)
    }
    if let kindName = option("--live-row"), let kind = LiveBenchmarks.Kind(rawValue: kindName),
        let variant = option("--variant").flatMap(LiveRow.Variant.init(rawValue:)), let base = option("--url")
    {
        let result = try await LiveRow.run(
            kind: kind, variant: variant, base: base, concurrency: option("--concurrency").flatMap(Int.init) ?? 1,
            total: option("--total").flatMap(Int.init) ?? 2000)
        print(String(decoding: try JSONEncoder().encode(result), as: UTF8.self))
        exit(0)
    }
    if arguments.contains("--logging") {
        print(try await BuildBenchmarks.loggedBody(runs: runs, iterations: option("--iterations").flatMap(Int.init) ?? 200).row())
        exit(0)
    }
    if arguments.contains("--cache") {
        print(try await CacheBenchmarks.hit(runs: runs, iterations: option("--iterations").flatMap(Int.init) ?? 20_000).row())
        if let base = option("--url") {
            print(try await CacheBenchmarks.revalidation(base: base, runs: runs, iterations: option("--iterations").flatMap(Int.init) ?? 500).row())
        }
        exit(0)
    }
    if arguments.contains("--cookies") {
        // `--row 9b` runs one row alone (to profile it).
        let iterations = option("--iterations").flatMap(Int.init)
        let row = option("--row")
        if row == nil || row == "9a" { print(try CookieBenchmarks.storeAtTheCap(runs: runs, iterations: iterations ?? 1_000).row()) }
        if row == nil || row == "9b" { print(try CookieBenchmarks.headerForABusyHost(runs: runs, iterations: iterations ?? 10_000).row()) }
        if row == nil || row == "9c" { print(try CookieBenchmarks.storeForABusyHost(runs: runs, iterations: iterations ?? 10_000).row()) }
        if row == nil || row == "9d" { print(try CookieBenchmarks.insecureStoreForABusyJar(runs: runs, iterations: iterations ?? 10_000).row()) }
        exit(0)
    }
    if arguments.contains("--memory-loop") {
        print(try await MemoryBenchmarks.inMemoryLoop())
        exit(0)
    }
    if arguments.contains("--parsers") {
        for row in try await StreamingBenchmarks.parsers(runs: runs) { print(row) }
        exit(0)
    }
    if let huge = option("--huge") {
        // Run on its own, so the peak resident memory belongs to this measurement alone.
        print(try await MemoryBenchmarks.hugeResponse(address: huge))
        exit(0)
    }
    print("| benchmark | Courier (median) | baseline (median) | ratio (median of per-run ratios) | target |")
    print("| --- | --- | --- | --- | --- |")
    print(try BuildBenchmarks.build(runs: runs, iterations: 20_000).row())
    print(try BuildBenchmarks.buildAgainstDictionary(runs: runs, iterations: 20_000).row())
    print(try await BuildBenchmarks.inMemory(runs: runs, iterations: 20_000).row())
    print(try await BuildBenchmarks.loggedBody(runs: runs, iterations: 200).row())
    if let base = option("--url") {
        for comparison in try await LiveBenchmarks.compare(base: base, runs: runs) { print(comparison.row()) }
        for comparison in try await LiveBenchmarks.delegateCost(base: base, runs: runs) { print(comparison.row()) }
        for comparison in try await LiveBenchmarks.middleware(base: base, runs: runs) { print(comparison.row()) }
    }
    if option("--url") == nil { print(try await MemoryBenchmarks.inMemoryLoop()) }
} catch {
    FileHandle.standardError.write(Data("benchmark failed: \(error)\n".utf8))
    exit(1)
}
