import Courier
import CourierConformance
@testable import CourierNIO
import Foundation
import NIOCore
import NIOPosix
import Testing

/// A task on one of the transport's event loops (``EventLoopTaskExecutor``) makes its calls where
/// it runs: it is on its loop after each call, its connection is opened on that loop and lent to
/// it again, and a large body is decoded away from the loop (the other connections on it go on).
@Suite("NIOExecutor: a task on the transport's event loop", .timeLimit(.minutes(2)))
struct EventLoopTaskExecutorTests {
    @Test func callsRunOnTheTasksLoopOverAConnectionOnIt() async throws {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) else { return }
        let httpbin = try servers().httpbin
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let transport = try NIOTransport(configuration: NIOTransport.Configuration(connectionsPerHost: 4), eventLoopGroup: group)
        let executor = NIOExecutor(transport: transport, maximumResponseSize: 1 << 20)
        // Two tasks, one per loop, each calling in turn.
        let first = transport.taskExecutor()
        let second = transport.taskExecutor()
        #expect(first.eventLoop !== second.eventLoop)
        func calls(on preferred: EventLoopTaskExecutor) -> Task<[Bool], any Error> {
            Task(executorPreference: preferred) {
                var onLoop: [Bool] = []
                for _ in 0..<5 {
                    let response = try await executor.send(.get |> url(httpbin + "/get") |> timeout(10))
                    #expect(response.status == 200)
                    onLoop.append(preferred.eventLoop.inEventLoop)
                }
                return onLoop
            }
        }
        let (a, b) = (calls(on: first), calls(on: second))
        #expect(try await a.value == Array(repeating: true, count: 5))
        #expect(try await b.value == Array(repeating: true, count: 5))
        // Each task's connection was opened on its loop and lent to it again: two, not more.
        let origin = try RequestTarget(url: httpbin).origin
        #expect(transport.connectionCounts(origin).open <= 2)
        await transport.shutdown()
        try await group.shutdownGracefully()
    }

    @Test func aLargeBodyIsDecodedOffTheLoop() async throws {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) else { return }
        let httpbin = try servers().httpbin
        let transport = try NIOTransport()
        let executor = NIOExecutor(transport: transport)
        let preferred = transport.taskExecutor()
        let placements = try await Task(executorPreference: preferred) {
            // httpbin's /bytes/N: N random bytes (over 64 KiB, and under it).
            let large = try await executor.send((.get |> url(httpbin + "/bytes/100000") |> decodeData()).map { _ in
                preferred.eventLoop.inEventLoop
            })
            let small = try await executor.send((.get |> url(httpbin + "/bytes/1000") |> decodeData()).map { _ in
                preferred.eventLoop.inEventLoop
            })
            return (large, small)
        }.value
        #expect(!placements.0, "100,000 bytes decoded on the loop")
        #expect(placements.1, "1,000 bytes decoded away from the loop")
        await transport.shutdown()
    }
}
