@_spi(Transports) import Courier
@testable import CourierCore
import Foundation
import Testing

/// A sink attached to a stream (what a WebSocket's reader is): chunks reach it in the producer's
/// own call, in order and one at a time; a sink that pauses holds the producer back as a slow
/// reader would; the end comes after every chunk, once. No sockets, no tasks but the test's.
@Suite("Streams delivering to a sink")
struct ChunkSinkTests {
    /// Records what it is handed; pauses when `pauses` says so for a chunk.
    final class Recorder: ChunkSink {
        enum Event: Equatable {
            case chunk(String)
            case resumed
            case end(String?)
        }

        let events = Locked<[Event]>([])
        let pauses: @Sendable (String) -> Bool
        /// Runs inside `take`, before it returns (a sink whose cause to pause clears at once).
        let during: @Sendable (String) -> Void

        init(pauses: @escaping @Sendable (String) -> Bool = { _ in false }, during: @escaping @Sendable (String) -> Void = { _ in }) {
            self.pauses = pauses
            self.during = during
        }

        func take(_ chunk: Data) -> Bool {
            let text = String(decoding: chunk, as: UTF8.self)
            events.withLock { $0.append(chunk.isEmpty ? .resumed : .chunk(text)) }
            during(text)
            return chunk.isEmpty || !pauses(text)
        }

        func streamEnded(_ error: CourierError?) {
            events.withLock { $0.append(.end(error.map { "\($0.cause)" })) }
        }

        var chunks: [String] {
            events.withLock { $0 }.compactMap {
                if case .chunk(let text) = $0 { return text }
                return nil
            }
        }
    }

    @Test("what was buffered goes first; then each chunk reaches the sink inside the producer's call; then the end")
    func deliveredInTheProducersCall() {
        let (stream, continuation) = ByteStream.makeStream(bufferLimit: 1 << 10)
        continuation.yield(Data("a".utf8))
        continuation.yield(Data("b".utf8))
        let sink = Recorder()
        #expect(stream.deliver(to: sink))
        #expect(sink.chunks == ["a", "b"])
        continuation.yield(Data("c".utf8))
        // No task ran between the yield and this line.
        #expect(sink.chunks == ["a", "b", "c"])
        let offered = continuation.offer(Data("d".utf8), whenRoom: { _ in Issue.record("no wait expected") })
        #expect(offered == .taken)
        #expect(sink.chunks == ["a", "b", "c", "d"])
        continuation.finish()
        #expect(sink.events.withLock { $0.last } == .end(nil))
        #expect(!continuation.offer(Data("e".utf8), whenRoom: { _ in }).isTaken)
    }

    @Test("a sink that pauses holds the producer back like a slow reader; resuming hands over the rest in order, then wakes the producer")
    func pauseHoldsTheProducer() {
        let (stream, continuation) = ByteStream.makeStream(bufferLimit: 4)
        let sink = Recorder(pauses: { $0 == "1" })
        #expect(stream.deliver(to: sink))
        #expect(continuation.offer(Data("1".utf8), whenRoom: { _ in }) == .taken)
        // Paused: the next chunks are buffered up to the limit, then the producer must wait.
        #expect(continuation.offer(Data("22".utf8), whenRoom: { _ in }) == .taken)
        #expect(continuation.offer(Data("33".utf8), whenRoom: { _ in }) == .taken)
        let room = Locked<[Bool]>([])
        #expect(continuation.offer(Data("44".utf8), whenRoom: { open in room.withLock { $0.append(open) } }) == .full)
        #expect(sink.chunks == ["1"])
        stream.resumeDelivery()
        #expect(sink.chunks == ["1", "22", "33"])
        #expect(room.withLock { $0 } == [true])
        // The producer offers again what waited: straight to the sink.
        #expect(continuation.offer(Data("44".utf8), whenRoom: { _ in }) == .taken)
        #expect(sink.chunks == ["1", "22", "33", "44"])
        #expect(sink.events.withLock { $0 }.filter { $0 == .resumed }.count == 2)  // at attach, and at the resume
    }

    @Test("a resume asked for while the sink is still taking the chunk it pauses on is not lost")
    func resumeDuringTheTake() {
        let (stream, continuation) = ByteStream.makeStream(bufferLimit: 1 << 10)
        let box = Locked<ByteStream?>(nil)
        // The sink's buffer fills on "x" and, before `take` returns, its reader already made room.
        let sink = Recorder(pauses: { $0 == "x" }, during: { text in if text == "x" { box.withLock { $0 }?.resumeDelivery() } })
        box.withLock { $0 = stream }
        #expect(stream.deliver(to: sink))
        continuation.yield(Data("x".utf8))
        continuation.yield(Data("y".utf8))
        #expect(sink.chunks == ["x", "y"])
        box.withLock { $0 = nil }
    }

    @Test("the end waits behind the chunks a paused sink has not taken, and comes once")
    func endAfterThePause() {
        let (stream, continuation) = ByteStream.makeStream(bufferLimit: 1 << 10)
        let sink = Recorder(pauses: { $0 == "1" })
        #expect(stream.deliver(to: sink))
        continuation.yield(Data("1".utf8))
        continuation.yield(Data("2".utf8))
        continuation.finish(throwing: CourierError(.transport(TransportFailure(.other, message: "reset"))))
        #expect(sink.events.withLock { $0 }.allSatisfy { if case .end = $0 { false } else { true } })
        stream.resumeDelivery()
        let events = sink.events.withLock { $0 }
        #expect(sink.chunks == ["1", "2"])
        #expect(events.filter { if case .end = $0 { true } else { false } }.count == 1)
        if case .end(let error)? = events.last { #expect(error != nil) } else { Issue.record("no end: \(events)") }
    }

    @Test("stopped from the reader's side: the sink hears it once, the producer is told to stop, nothing more is taken")
    func stoppedByTheReader() {
        let (stream, continuation) = ByteStream.makeStream(bufferLimit: 1 << 10)
        let stopped = Locked(false)
        continuation.onTermination { stopped.withLock { $0 = true } }
        let sink = Recorder()
        #expect(stream.deliver(to: sink))
        continuation.yield(Data("1".utf8))
        stream.cancel()
        #expect(stopped.withLock { $0 })
        #expect(continuation.offer(Data("2".utf8), whenRoom: { _ in }) == .closed)
        continuation.finish()
        let events = sink.events.withLock { $0 }
        #expect(sink.chunks == ["1"])
        #expect(events.filter { if case .end = $0 { true } else { false } }.count == 1)
    }

    @Test("no sink for a body in hand, an observed stream, or one a reader began")
    func refused() async throws {
        #expect(!ByteStream(Data("x".utf8)).deliver(to: Recorder()))
        let (live, _) = ByteStream.makeStream()
        #expect(!live.observing(chunk: { _ in }, end: { _ in }).deliver(to: Recorder()))
        let (read, continuation) = ByteStream.makeStream()
        continuation.yield(Data("x".utf8))
        continuation.finish()
        var iterator = read.makeAsyncIterator()
        _ = try await iterator.next()
        _ = try await iterator.next()
        #expect(!read.deliver(to: Recorder()))
    }
}

extension ByteStream.Offer {
    fileprivate var isTaken: Bool { self == .taken }
}
