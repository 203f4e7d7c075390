import Courier
import CourierConformance
@testable import CourierNIO
import Foundation
import Testing

/// The connection pool against the stream server's gate (`/gated` answers its head and 1,000
/// bytes, then waits for `/open`): the limit per host holds, a waiting hop leaves the line at once
/// when cancelled, idle connections close on time, and an upload waiting for its producer holds
/// only its own connection. Each test waits for progress it can see (the pool's counts), never
/// for a guess at the machine's speed; the suite's time limit is only a hang guard.
@Suite("NIOExecutor: connection pool", .serialized, .timeLimit(.minutes(2)))
struct PoolTests {
    static func origin(_ url: String) throws -> Origin { try RequestTarget(url: url).origin }

    /// Waits until `condition` holds, yielding between looks.
    static func eventually(_ condition: () -> Bool) async throws {
        while !condition() { try await Task.sleep(for: .milliseconds(5)) }
    }

    /// Opens the gate `key` through an executor of its own (the pool under test may be full).
    static func open(_ key: String, stream: String) async throws {
        _ = try await NIOExecutor.shared.send(.get |> url(stream + "/open") |> query("key", key))
    }

    @Test func aWaitingHopLeavesAtOnceWhenCancelledAndTheLimitHolds() async throws {
        let stream = try servers().stream
        let origin = try Self.origin(stream)
        let transport = try NIOTransport(configuration: NIOTransport.Configuration(connectionsPerHost: 1))
        let executor = NIOExecutor(transport: transport)
        let key = UUID().uuidString
        // The one connection, held: the head came, the body waits for the gate.
        let held = try await executor.stream(.get |> url(stream + "/gated") |> query("key", key))
        #expect(transport.connectionCounts(origin) == .init(open: 1, http2: 0, waiting: 0))
        let waiting = Task { try await executor.send(.get |> url(stream + "/log")) }
        try await Self.eventually { transport.connectionCounts(origin).waiting == 1 }
        #expect(transport.connectionCounts(origin).open == 1)
        waiting.cancel()
        let outcome = await waiting.result
        guard case .failure(let error as CourierError) = outcome, case .cancelled = error.cause else {
            Issue.record("a cancelled waiter ended with \(outcome)")
            return
        }
        // It left while the gate was still shut: the held hop has its 1,000 bytes and no more.
        #expect(transport.connectionCounts(origin) == .init(open: 1, http2: 0, waiting: 0))
        try await Self.open(key, stream: stream)
        let body = try await held.body.collect(upTo: 1 << 20)
        #expect(body.count == 10_000)
        // The connection went back to the pool and serves the next hop.
        #expect(try await executor.send(.get |> url(stream + "/log")).status == 200)
        #expect(transport.connectionCounts(origin).open == 1)
        await transport.shutdown()
    }

    @Test func hopsBeyondTheLimitWaitTheirTurnAndAllFinish() async throws {
        let stream = try servers().stream
        let origin = try Self.origin(stream)
        let transport = try NIOTransport(configuration: NIOTransport.Configuration(connectionsPerHost: 2))
        let executor = NIOExecutor(transport: transport)
        let key = UUID().uuidString
        let calls = (0..<6).map { _ in
            Task { try await executor.send(.get |> url(stream + "/gated") |> query("key", key)).body.count }
        }
        try await Self.eventually { transport.connectionCounts(origin).waiting == 4 }
        #expect(transport.connectionCounts(origin).open == 2)
        try await Self.open(key, stream: stream)
        for call in calls { #expect(try await call.value == 10_000) }
        #expect(transport.connectionCounts(origin).open <= 2)
        await transport.shutdown()
    }

    @Test func anIdleConnectionClosesAfterTheIdleTimeout() async throws {
        let httpbin = try servers().httpbin
        let origin = try Self.origin(httpbin)
        let transport = try NIOTransport(configuration: NIOTransport.Configuration(idleTimeout: .milliseconds(200)))
        #expect(try await NIOExecutor(transport: transport).send(.get |> url(httpbin + "/get")).status == 200)
        // Without the timer this waits until the suite's time limit, and fails.
        try await Self.eventually { transport.connectionCounts(origin).open == 0 }
        await transport.shutdown()
    }

    /// A streamed upload whose producer has nothing to send yet holds its own connection only.
    @Test func anUploadWaitingForItsProducerHoldsUpNothingElse() async throws {
        let httpbin = try servers().httpbin
        let origin = try Self.origin(httpbin)
        let transport = try NIOTransport(configuration: NIOTransport.Configuration(connectionsPerHost: 2))
        let executor = NIOExecutor(transport: transport)
        let (chunks, producer) = AsyncStream<Data>.makeStream()
        let sending = Task { try await executor.send(.post |> url(httpbin + "/post") |> upload(chunks)) }
        try await Self.eventually { transport.connectionCounts(origin).open == 1 }
        let status = try await executor.send(.get |> url(httpbin + "/get")).status
        #expect(status == 200)
        producer.yield(Data("late".utf8))
        producer.finish()
        #expect(try await sending.value.status == 200)
        await transport.shutdown()
    }
}
