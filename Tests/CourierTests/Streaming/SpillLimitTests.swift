import Foundation
import Testing

import Courier
@testable import CourierCore
@testable import CourierURLSession

/// The disk spill of streams whose producer cannot wait: per stream and across streams, and
/// given back the moment a stream stops or is read.
@Suite("Streaming: spill limits")
struct SpillLimitTests {
    static let piece = Data(repeating: 0x33, count: 512 << 10)

    @Test func streamsTogetherStayUnderTheSharedCeiling() async throws {
        let budget = SpillBudget(limit: 3 << 20)
        let first = StreamChannel(limit: 1024, spillLimit: 2 << 20, budget: budget)
        let second = StreamChannel(limit: 1024, spillLimit: 2 << 20, budget: budget)
        // The first piece of each fills its memory buffer; the rest go to disk.
        for _ in 0..<3 { #expect(first.yield(Self.piece)) }
        #expect(budget.used == 1 << 20)
        for _ in 0..<5 { #expect(second.yield(Self.piece)) }
        #expect(budget.used == 3 << 20)
        // Within its own limit, but past the shared ceiling: that stream ends.
        #expect(!first.yield(Self.piece))
        let error = await expectCourierError { _ = try await Self.readAll(first) }
        guard case .slowConsumer = error?.cause else {
            Issue.record("expected slowConsumer, got \(String(describing: error))")
            return
        }
        // A stopped stream gives its share back at once; a read one as it is read.
        #expect(budget.used == 2 << 20)
        second.finish()
        let read = try await Self.readAll(second)
        #expect(read == 5 * Self.piece.count)
        #expect(budget.used == 0)
    }

    @Test func aStreamsOwnLimitEndsItFirst() async throws {
        let budget = SpillBudget(limit: 1 << 30)
        let channel = StreamChannel(limit: 1024, spillLimit: 1 << 20, budget: budget)
        for _ in 0..<3 { #expect(channel.yield(Self.piece)) }
        #expect(!channel.yield(Self.piece))
        #expect(budget.used == 0, "the stopped stream kept nothing")
    }

    @Test func theProcessCeilingIsTheSharedBudgetAndLimitsAreClamped() {
        // Read only: other tests spill meanwhile, so the process's ceiling is not changed here.
        #expect(StreamOptions.processSpillLimit == SpillBudget.shared.limit)
        #expect(SpillBudget(limit: -5).limit == 0)
        #expect(!SpillBudget(limit: -5).reserve(1))
    }

    static func readAll(_ channel: StreamChannel) async throws(CourierError) -> Int {
        var total = 0
        while let chunk = try await channel.next(isolation: nil) { total += chunk.count }
        return total
    }
}
