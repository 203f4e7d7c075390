import Foundation
import Testing

@testable import CourierCore

/// A body a transport gathered whole under the exchange's rules is handed over in hand
/// (`StreamChannel.takeFinished()`): every byte, in order, once; never a body that failed, was
/// stopped or was already being read.
@Suite("A gathered body handed over in hand")
struct GatheredBodyTests {
    @Test func aFinishedBodyIsTakenWholeInOrderAndOnlyOnce() {
        let channel = StreamChannel(limit: .max)
        for part in ["ab", "", "cde", "f"] { channel.yield(Data(part.utf8)) }
        channel.finish()
        #expect(channel.takeFinished() == Data("abcdef".utf8))
        #expect(channel.takeFinished() == nil)
    }

    @Test func oneChunkIsHandedOverAsItCame() {
        let channel = StreamChannel(limit: .max)
        let chunk = Data(repeating: 1, count: 100)
        channel.yield(chunk)
        channel.finish()
        #expect(channel.takeFinished() == chunk)
    }

    @Test func aTakenBodyNeverRunsTheProducersStopActions() {
        let channel = StreamChannel(limit: .max)
        let stopped = Locked(false)
        channel.onTermination { stopped.withLock { $0 = true } }
        channel.yield(Data("x".utf8))
        channel.finish()
        #expect(channel.takeFinished() != nil)
        channel.terminate(.readerStop)
        #expect(!stopped.withLock { $0 })
    }

    @Test func aBodyThatFailedOrWasStoppedOrIsUnfinishedIsNotTaken() {
        let failed = StreamChannel(limit: .max)
        failed.yield(Data("x".utf8))
        failed.finish(CourierError(.timedOut))
        #expect(failed.takeFinished() == nil)

        let stopped = StreamChannel(limit: .max)
        stopped.yield(Data("x".utf8))
        stopped.terminate(CourierError(.responseTooLarge(limit: 0)))
        stopped.finish()
        #expect(stopped.takeFinished() == nil)

        let unfinished = StreamChannel(limit: .max)
        unfinished.yield(Data("x".utf8))
        #expect(unfinished.takeFinished() == nil)
    }

    @Test func aBodyBeingReadIsNotTaken() async throws {
        let channel = StreamChannel(limit: .max)
        channel.yield(Data("ab".utf8))
        #expect(try await channel.next(isolation: nil, atLeast: 1) == Data("ab".utf8))
        channel.yield(Data("c".utf8))
        channel.finish()
        // Read from already: the rest stays the stream's.
        #expect(channel.takeFinished() == nil)
        #expect(try await channel.next(isolation: nil, atLeast: 1) == Data("c".utf8))
    }
}
