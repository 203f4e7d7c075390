import Courier
import CourierConformance
import Foundation
import Testing

/// The executors that answer from memory, held to the conformance cases that need neither the
/// network (``ConformanceCase/Requirement/network``) nor, for a replay, real time.
@Suite("Conformance: in-memory and replay")
struct ReferenceConformanceTests {
    @Test(arguments: ConformanceSuite.cases(meeting: [.timing]))
    func inMemoryConforms(_ check: ConformanceCase) async throws {
        try await check.run(servers: ConformanceSuite.referenceServers) { ConformanceSuite.reference() }
    }

    @Test(arguments: ConformanceSuite.cases(meeting: []))
    func harReplayConforms(_ check: ConformanceCase) async throws {
        // Record the reference executor answering the case, then hold the replay to it.
        let recorder = HARRecorder(bodies: .verbatim)
        try await check.run(servers: ConformanceSuite.referenceServers) { ConformanceSuite.reference().with(recorder) }
        let replay = HARReplayExecutor(recorder.har)
        try await check.run(servers: ConformanceSuite.referenceServers) { replay }
    }

    @Test func theNetworkFreeCasesAreTheOnesThatSaySo() {
        let free = ConformanceSuite.cases(meeting: [.timing]).map(\.name)
        // Seven: the early-head case moved to the stream server's gate, which only a network
        // transport can answer (a drip timed by a stopwatch was a guess at the machine's speed).
        #expect(free.count >= 7)
        #expect(ConformanceSuite.cases.count > free.count)
        #expect(free.allSatisfy { !$0.isEmpty })
    }
}
