import Courier
import CourierConformance
@testable import CourierNIO
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
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

    /// A hop read whole with a timeout waits in the pool's line on the transport's own terms (no
    /// task of its own, the body gathered under the rules): its idle timer still counts the
    /// wait, takes it out of the line, and the call says which limit fired.
    @Test(.timeLimit(.minutes(1))) func aGatheredHopWaitingForAConnectionTimesOutAndLeavesTheLine() async throws {
        let stream = try servers().stream
        let origin = try Self.origin(stream)
        let transport = try NIOTransport(configuration: NIOTransport.Configuration(connectionsPerHost: 1))
        let executor = NIOExecutor(transport: transport)
        let key = UUID().uuidString
        let held = try await executor.stream(.get |> url(stream + "/gated") |> query("key", key))
        let error = await #expect(throws: CourierError.self) { try await executor.send(.get |> url(stream + "/log") |> timeout(0.3)) }
        guard case .timedOut? = error?.cause else {
            Issue.record("a hop that waited past its timeout ended with \(String(describing: error))")
            return
        }
        #expect(error?.timeout?.kind == .idle && error?.timeout?.limit == .milliseconds(300))
        #expect(transport.connectionCounts(origin) == .init(open: 1, http2: 0, waiting: 0))
        try await Self.open(key, stream: stream)
        #expect(try await held.body.collect(upTo: 1 << 20).count == 10_000)
        #expect(try await executor.send(.get |> url(stream + "/log") |> timeout(30)).status == 200)
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

/// A listener that accepts connections and closes each at once, counting them: an `https`
/// origin whose every connection fails before its TLS handshake.
final class ClosingListener: Sendable {
    let channel: any Channel
    private let accepted: NIOLockedValueBox<Int>

    var accepts: Int { accepted.withLockedValue { $0 } }
    var url: String { "https://127.0.0.1:\(channel.localAddress?.port ?? 0)" }

    init() async throws {
        let counter = NIOLockedValueBox(0)
        accepted = counter
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { child in
                counter.withLockedValue { $0 += 1 }
                return child.close()
            }
            .bind(host: "127.0.0.1", port: 0).get()
    }

    func close() async { try? await channel.close() }
}

extension PoolTests {
    /// An origin whose connections fail is tried once per backoff, however many hops ask: the
    /// hops after the failure fail at once, saying no attempt was made (a long backoff, so no
    /// machine is slow enough to reach its end).
    @Test func aFailingOriginIsTriedOncePerBackoffHoweverManyHopsAsk() async throws {
        let listener = try await ClosingListener()
        var configuration = NIOTransport.Configuration(connectionsPerHost: 4)
        configuration.connectionBackoff = ConnectionBackoff(initial: .seconds(60), maximum: .seconds(60))
        let transport = try NIOTransport(configuration: configuration)
        let executor = NIOExecutor(transport: transport)
        let first = await #expect(throws: CourierError.self) { _ = try await executor.send(.get |> url(listener.url + "/x")) }
        // The attempt itself failed: its own failure, not the backoff's.
        guard case .transport(let failure)? = first?.cause else {
            Issue.record("expected a transport failure, got \(String(describing: first))")
            return
        }
        #expect(!failure.message.contains("not tried again yet"), "\(failure.message)")
        let errors = await withTaskGroup(of: CourierError?.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    do {
                        _ = try await executor.send(.get |> url(listener.url + "/x"))
                        return nil
                    } catch {
                        return error as? CourierError
                    }
                }
            }
            return await group.reduce(into: [CourierError?]()) { $0.append($1) }
        }
        #expect(listener.accepts == 1, "\(listener.accepts) connections for 21 hops")
        for error in errors {
            guard case .transport(let failure)? = error?.cause else {
                Issue.record("expected a transport failure, got \(String(describing: error))")
                continue
            }
            #expect(failure.message.contains("not tried again yet"), "\(failure.message)")
        }
        await transport.shutdown()
        await listener.close()
    }
}

/// A TCP listener that accepts connections and never says a word (a TLS handshake to it never
/// finishes).
final class SilentListener: Sendable {
    let channel: any Channel

    var url: String { "https://127.0.0.1:\(channel.localAddress?.port ?? 0)" }

    init() async throws {
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { _ in MultiThreadedEventLoopGroup.singleton.any().makeSucceededVoidFuture() }
            .bind(host: "127.0.0.1", port: 0).get()
    }

    func close() async { try? await channel.close() }
}

extension PoolTests {
    /// A server that accepts and never answers the TLS handshake: the hop fails as the connect
    /// timeout, which the error names with its length.
    @Test func aHandshakeThatNeverEndsIsTheConnectTimeoutByName() async throws {
        let listener = try await SilentListener()
        let transport = try NIOTransport(configuration: .init(connectTimeout: .milliseconds(200)))
        let executor = NIOExecutor(transport: transport)
        let error = await #expect(throws: CourierError.self) { try await executor.send(.get |> url(listener.url + "/never")) }
        #expect(error?.timeout == CourierError.Timeout(.connect, limit: .milliseconds(200)))
        #expect(error?.summary.contains("no connection was made within 200 ms (the connect timeout)") == true, "\(String(describing: error))")
        await transport.shutdown(gracePeriod: .zero)
        await listener.close()
    }
}

extension PoolTests {
    /// A refused connection keeps what was measured (the connect it was in, when it failed), and
    /// so does a handshake that never ends: failures are when timings matter most.
    @Test func aFailedHopKeepsItsTimings() async throws {
        let listener = try await ClosingListener()
        let port = listener.channel.localAddress?.port ?? 0
        await listener.close()
        let transport = try NIOTransport(configuration: .init(connectTimeout: .milliseconds(200)))
        let executor = NIOExecutor(transport: transport).recordingTimings()
        let refused = await #expect(throws: CourierError.self) { try await executor.send(.get |> url("http://127.0.0.1:\(port)/x")) }
        let timings = try #require(refused?.timings, "\(String(describing: refused))")
        #expect(timings.connect != nil && timings.failedAt != nil, "\(timings)")

        let silent = try await SilentListener()
        let stalled = await #expect(throws: CourierError.self) { try await executor.send(.get |> url(silent.url + "/x")) }
        let handshake = try #require(stalled?.timings?.tls, "\(String(describing: stalled))")
        #expect(handshake.duration > .zero)
        await transport.shutdown(gracePeriod: .zero)
        await silent.close()
    }
}
