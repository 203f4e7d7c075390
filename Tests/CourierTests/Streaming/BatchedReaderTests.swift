import Courier
@testable import CourierCore
@testable import CourierURLSession
import Foundation
import Testing

/// A reader that asks for a batch (a download writing to disk) is woken once that many bytes are
/// buffered, at the end, when the stream stops, or after the hold limit: never left waiting on
/// bytes that already arrived, and never woken per chunk on a fast link.
@Suite("Batched reader")
struct BatchedReaderTests {
    private let chunk = Data(repeating: 7, count: 16 << 10)

    /// Starts a reader asking for `minimum` bytes and waits until it is parked.
    private func parkedReader(on channel: StreamChannel, minimum: Int) async -> Task<[Data]?, any Error> {
        let reader = Task {
            guard let first = try await channel.next(isolation: nil, atLeast: minimum) else { return [Data]?.none }
            var chunks = [first]
            while let more = channel.poll() { chunks.append(more) }
            return chunks
        }
        await waitUntil { channel.readerIsWaiting }
        return reader
    }

    @Test func theReaderIsWokenOnceTheBatchIsThereNotPerChunk() async throws {
        let channel = StreamChannel(limit: 1 << 20, holdLimit: .seconds(3600))
        let reader = await parkedReader(on: channel, minimum: 64 << 10)
        for _ in 0..<3 { #expect(channel.yield(chunk)) }
        // 48 KiB of 64: held, the reader still waits.
        #expect(channel.readerIsWaiting)
        #expect(channel.yield(chunk))
        let chunks = try #require(try await reader.value)
        #expect(chunks.count == 4)
        #expect(chunks.reduce(0) { $0 + $1.count } == 64 << 10)
    }

    @Test func theEndWakesAReaderWithWhatIsHeldThenTheEnd() async throws {
        let channel = StreamChannel(limit: 1 << 20, holdLimit: .seconds(3600))
        let reader = await parkedReader(on: channel, minimum: 1 << 20)
        #expect(channel.yield(chunk))
        #expect(channel.yield(chunk))
        channel.finish()
        let chunks = try #require(try await reader.value)
        #expect(chunks.reduce(0) { $0 + $1.count } == 32 << 10)
        #expect(try await channel.next(isolation: nil) == nil)
    }

    @Test func aFailureAfterHeldChunksDeliversThemFirst() async throws {
        let channel = StreamChannel(limit: 1 << 20, holdLimit: .seconds(3600))
        let reader = await parkedReader(on: channel, minimum: 1 << 20)
        #expect(channel.yield(chunk))
        channel.finish(CourierError(.transport(TransportFailure(.truncatedBody, message: "cut"))))
        #expect(try await reader.value?.first == chunk)
        await #expect(throws: CourierError.self) { try await channel.next(isolation: nil) }
    }

    @Test func aStopWakesAWaitingReaderWithItsError() async {
        let channel = StreamChannel(limit: 1 << 20, holdLimit: .seconds(3600))
        let reader = await parkedReader(on: channel, minimum: 1 << 20)
        #expect(channel.yield(chunk))
        channel.terminate(CourierError(.cancelled))
        await #expect(throws: CourierError.self) { try await reader.value }
    }

    @Test func aChunkWithNothingAfterItReachesTheReaderWithinTheHoldLimit() async throws {
        // A slow or stalled link: one chunk, then nothing. The reader must not wait for more.
        let channel = StreamChannel(limit: 1 << 20, holdLimit: .milliseconds(20))
        let reader = await parkedReader(on: channel, minimum: 1 << 20)
        #expect(channel.yield(chunk))
        let chunks = try #require(try await reader.value)
        #expect(chunks == [chunk])
        // Woken by the timer: no end and no stop came, and nothing else would wake it.
        #expect(!channel.isClosed)
    }

    @Test func aReaderThatWaitedLongerThanTheHoldLimitGetsTheNextChunkAtOnce() async throws {
        let channel = StreamChannel(limit: 1 << 20, holdLimit: .milliseconds(1))
        let reader = await parkedReader(on: channel, minimum: 1 << 20)
        try await Task.sleep(for: .milliseconds(20))
        #expect(channel.yield(chunk))
        #expect(try await reader.value == [chunk])
    }

    @Test func aBatchLargerThanTheBufferWakesTheReaderAtTheBufferLimit() async throws {
        // Asking for more than may be buffered cannot make the producer overflow.
        let channel = StreamChannel(limit: 32 << 10, holdLimit: .seconds(3600))
        let reader = await parkedReader(on: channel, minimum: 1 << 20)
        #expect(channel.yield(chunk))
        #expect(channel.yield(chunk))
        let chunks = try #require(try await reader.value)
        #expect(chunks.reduce(0) { $0 + $1.count } == 32 << 10)
    }

    @Test func aPlainReaderStillGetsEveryChunkAtOnce() async throws {
        let channel = StreamChannel(limit: 1 << 20, holdLimit: .seconds(3600))
        let reader = await parkedReader(on: channel, minimum: 0)
        #expect(channel.yield(chunk))
        #expect(try await reader.value == [chunk])
    }

    @Test func aDownloadWritesEveryByteInOrderThroughBatches() async throws {
        // The download path end to end on the in-memory executor, with a body of odd-sized chunks.
        let chunks = (0..<300).map { Data(repeating: UInt8($0 % 251), count: 1_000 + $0 * 37) }
        let body = chunks.reduce(Data(), +)
        let executor = InMemoryExecutor { _ in .stream(chunks, headers: [.contentLength: "\(body.count)"]) }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("batched-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("file.bin")
        let download = try await executor.download(.get |> url("https://example.com/file.bin"), to: destination)
        #expect(download.size == Int64(body.count))
        #expect(try Data(contentsOf: destination) == body)
    }
}
