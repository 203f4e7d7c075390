// not released: the soak harness is a tool of this repository (scripts/release)
@testable import CourierSoak
import Foundation
import Testing

/// The soak's judgement: growth from medians after the warm-up, throughput per window, the heap
/// read from glibc's report, and bookkeeping that does not grow with the traffic.
@Suite struct SoakReportTests {
    /// A ten-minute report whose samples follow `memory` (MiB at each second) and whose calls
    /// finish at `perSecond` a second.
    private func report(memory: (Int) -> Double, heap: (Int) -> Double = { _ in 10 }, perSecond: (Int) -> Int = { _ in 100 }) -> SoakReport {
        let configuration = SoakConfiguration(duration: .seconds(600))
        let samples = (0...600).map { second in
            ProcessSample(
                elapsed: Double(second), residentBytes: Int(memory(second) * 1_048_576), heapInUseBytes: Int(heap(second) * 1_048_576),
                openFiles: 20, completed: 0)
        }
        return SoakReport(
            transport: "Test", configuration: configuration, completed: [.small: 1], injected: [:], unexpected: [:], examples: [],
            samples: samples, completionsPerSecond: (0..<600).map(perSecond))
    }

    @Test func memoryThatRisesOnlyDuringTheWarmUpPasses() {
        let soak = report(memory: { $0 < 60 ? 30 + Double($0) : 90 })
        #expect(soak.memoryGrowth == 0)
        #expect(soak.passed)
    }

    @Test func memoryThatKeepsGrowingFails() throws {
        let soak = report(memory: { 90 + Double($0) / 20 })
        let growth = try #require(soak.memoryGrowth)
        #expect(growth > 0.05)
        #expect(soak.problems.contains { $0.hasPrefix("resident memory grew") })
    }

    @Test func heapGrowthIsReportedBesideResidentMemory() throws {
        let soak = report(memory: { _ in 90 }, heap: { 10 + Double($0) / 60 })
        let growth = try #require(soak.heapGrowth)
        #expect(growth > 0.5)
        #expect(soak.description.contains("heap in use +"))
    }

    @Test func throughputIsCountedPerMinuteAfterTheWarmUp() {
        let soak = report(memory: { _ in 90 })
        #expect(soak.throughput.window == 60)
        #expect(soak.throughput.counts == Array(repeating: 6000, count: 9))
    }

    @Test func throughputThatFallsFails() {
        let soak = report(memory: { _ in 90 }, perSecond: { $0 < 300 ? 100 : 50 })
        #expect(soak.problems.contains { $0.hasPrefix("throughput fell") })
    }

    /// CI's one-minute soak ran beside a build in the proof that a busy machine fails nothing: a
    /// build starting mid-run halves the later windows. A short run reports the fall, not fails.
    @Test func aShortRunReportsAFallInThroughputWithoutFailing() {
        let configuration = SoakConfiguration(duration: .seconds(60))
        let samples = (0...60).map { second in
            ProcessSample(elapsed: Double(second), residentBytes: 90 << 20, heapInUseBytes: 10 << 20, openFiles: 20, completed: 0)
        }
        let soak = SoakReport(
            transport: "Test", configuration: configuration, completed: [.small: 1], injected: [:], unexpected: [:], examples: [],
            samples: samples, completionsPerSecond: (0..<60).map { $0 < 35 ? 100 : 30 })
        #expect(soak.throughput.counts.count >= 2)
        #expect(soak.passed)
        #expect(soak.description.contains("(reported, not judged) throughput per"))
    }

    @Test func theTallyKeepsOneCountPerSecondWhateverTheTraffic() {
        let tally = Tally()
        for call in 0..<100_000 { tally.record(.small, at: Double(call % 10) + 0.5, took: 0) }
        tally.record(.small, at: -3, took: 0)
        tally.record(.small, at: .nan, took: 0)
        tally.record(.small, at: .infinity, took: 0)
        tally.record(.small, at: 1e300, took: 0)
        #expect(tally.completedCount == 100_004)
        // Before the start, NaN and infinity count at the start; 1e300 at the end of the week.
        let firstTenSeconds: Int = tally.completionsPerSecond.prefix(10).reduce(0, +)
        #expect(firstTenSeconds == 100_003)
        #expect(tally.completionsPerSecond.last == 1)
        #expect(tally.completionsPerSecond.count <= Int(Tally.longestRun) + 1)
    }

    @Test func theHeapInUseIsReadFromTheTotalsAfterTheLastArena() {
        let report = """
            <malloc version="1">
            <heap nr="0">
            <total type="fast" count="1" size="999"/>
            <total type="rest" count="1" size="999"/>
            <system type="current" size="999999"/>
            </heap>
            <total type="fast" count="2" size="100"/>
            <total type="rest" count="3" size="4000"/>
            <total type="mmap" count="1" size="50000"/>
            <system type="current" size="1000000"/>
            <system type="max" size="2000000"/>
            </malloc>
            """
        #expect(HeapReading.inUse(fromMallocInfo: report) == 1_000_000 - 100 - 4000 + 50000)
        #expect(HeapReading.inUse(fromMallocInfo: "<malloc/>") == nil)
    }

    #if canImport(Glibc)
        @Test func theHeapIsReadOnlyWhereMallocIsGlibcs() throws {
            // Under ThreadSanitizer (CI runs these tests again so) malloc is the sanitizer's,
            // which malloc_info does not see: no reading rather than a wrong one.
            guard HeapReading.mallocIsGlibcs else {
                #expect(HeapReading.inUse() == nil)
                return
            }
            let before = try #require(HeapReading.inUse())
            // Mapped on its own and never touched: no resident cost, and far more than any other
            // test allocates or frees meanwhile.
            let block = UnsafeMutableRawPointer.allocate(byteCount: 256 << 20, alignment: 16)
            defer { block.deallocate() }
            let during = try #require(HeapReading.inUse())
            #expect(during - before >= 128 << 20)
        }
    #endif
}
