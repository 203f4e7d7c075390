import AsyncHTTPClient
import Courier
import CourierAsyncHTTPClient
import CourierConformance
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

/// A streamed upload is read no further ahead than the event loop that writes it: AsyncHTTPClient's
/// async API queues each part to the loop and asks for the next at once, so with the loop busy
/// (a server's loops are, under load) a whole file used to be read into memory ahead of the
/// network (found by the conformance case "a file that grows or shrinks" under CI's load).
@Suite("AsyncHTTPClientExecutor: streamed uploads and a busy event loop", .timeLimit(.minutes(2)))
struct UploadReadAheadTests {
    /// Chunks of 16 KiB, counted as they are pulled; pulling the second keeps the loop busy until
    /// the test lets it go.
    final class Source: Sendable {
        let pulls = NIOLockedValueBox(0)
        let busy: @Sendable () -> Void
        let count: Int

        init(count: Int, busy: @escaping @Sendable () -> Void) {
            self.count = count
            self.busy = busy
        }

        var chunks: AsyncStream<Data> {
            AsyncStream(unfolding: { [self] in
                let pulled = pulls.withLockedValue { value -> Int in
                    value += 1
                    return value
                }
                guard pulled <= count else { return nil }
                if pulled == 2 { busy() }
                return Data(repeating: 0x41, count: 16 << 10)
            })
        }
    }

    @Test func aBusyLoopStopsTheUploadFromBeingReadAhead() async throws {
        let servers = try servers()
        // A loop of the test's own: keeping it busy stalls no other test.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let client = HTTPClient(eventLoopGroup: group, configuration: AsyncHTTPClientExecutor.clientConfiguration())
        let executor = try AsyncHTTPClientExecutor(client: client)
        let release = NIOLockedValueBox(false)
        let loop = group.next()
        let source = Source(count: 200) {
            // Busy: the loop runs nothing else until released (a thread of NIO's, not of Swift
            // concurrency's pool).
            loop.execute {
                while !release.withLockedValue({ $0 }) { usleep(1_000) }
            }
        }
        let sending = Task {
            let response = try await executor.send(
                .post |> url(servers.httpbin + "/post") |> upload(source.chunks, length: 200 * 16 << 10) |> timeout(60))
            return try JSONDecoder().decode(HTTPBinEcho.self, from: response.body)
        }
        // Wait until the loop is busy and the upload has had every chance to run ahead: either
        // it reads past the 256 KiB it may (the defect), or half a second passes with it held
        // back. (A slow machine can only make the defect harder to see, never fail the fix.)
        let allowed = 2 + (256 << 10) / (16 << 10) + 1
        let clock = ContinuousClock()
        let start = clock.now
        while source.pulls.withLockedValue({ $0 }) <= allowed, clock.now - start < .milliseconds(500) {
            try await Task.sleep(for: .milliseconds(10))
        }
        let pulledWhileBusy = source.pulls.withLockedValue { $0 }
        release.withLockedValue { $0 = true }
        let echo = try await sending.value
        #expect(pulledWhileBusy <= allowed, "the upload read \(pulledWhileBusy) chunks while the loop could write none")
        #expect(echo.data.count == 200 * 16 << 10)
        try await client.shutdown()
        try await group.shutdownGracefully()
    }
}

/// What httpbin's `/post` echoes, as far as this test reads it.
private struct HTTPBinEcho: Decodable {
    let data: String
}
