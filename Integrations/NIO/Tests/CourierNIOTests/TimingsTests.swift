import Courier
import CourierConformance
@testable import CourierNIO
import Foundation
import Testing

/// CourierNIO reports every phase of a hop: the name lookup (for a name, not an address), the
/// connection, the TLS handshake and the protocol ALPN chose, the request written, the first
/// byte, the body's end, the wait for a pooled connection, and whether the connection was new.
@Suite("NIOExecutor: hop timings", .serialized, .timeLimit(.minutes(2)))
struct TimingsTests {
    /// Two calls to one origin on a transport of their own: the first opens, the second reuses.
    private static func twoCalls(to url: String, on transport: NIOTransport) async throws -> (HopTimings, HopTimings) {
        let executor = NIOExecutor(transport: transport).recordingTimings()
        var seen: [HopTimings] = []
        for _ in 0..<2 {
            let response = try await executor.stream(.get |> Courier.url(url))
            _ = try await response.body.collect(upTo: 1 << 20)
            seen.append(try #require(response.timings))
        }
        return (seen[0], seen[1])
    }

    /// What every first hop on a new connection has, in order.
    private static func expectOpened(_ timings: HopTimings, protocol name: String, tls: Bool) throws {
        let connect = try #require(timings.connect, "\(timings)")
        #expect(timings.connection == .new)
        #expect(timings.negotiatedProtocol == name)
        #expect(timings.queued == nil)
        let requestStarted = try #require(timings.requestStarted)
        let sent = try #require(timings.requestSent)
        let firstByte = try #require(timings.firstByte)
        let ended = try #require(timings.bodyEnded)
        var setUp = connect.end
        if tls {
            let handshake = try #require(timings.tls, "\(timings)")
            #expect(handshake.start >= connect.end)
            setUp = handshake.end
        } else {
            #expect(timings.tls == nil)
        }
        #expect(setUp <= requestStarted && requestStarted <= sent && sent <= firstByte && firstByte <= ended, "\(timings)")
    }

    /// What a hop on a reused connection has: no lookup, no connect, no handshake.
    private static func expectReused(_ timings: HopTimings, protocol name: String) throws {
        #expect(timings.connection == .reused, "\(timings)")
        #expect(timings.negotiatedProtocol == name)
        #expect(timings.dns == nil && timings.connect == nil && timings.tls == nil, "\(timings)")
        #expect(timings.firstByte != nil && timings.bodyEnded != nil && timings.requestSent != nil)
    }

    @Test func aNameIsLookedUpAnAddressIsNotAndTheSecondHopReusesTheConnection() async throws {
        let servers = try servers()
        // `localhost`: a name, looked up; `127.0.0.1`: an address, connected to at once.
        let named = try NIOTransport()
        let (first, second) = try await Self.twoCalls(to: servers.otherOrigin + "/bytes/2048", on: named)
        let dns = try #require(first.dns, "\(first)")
        let connect = try #require(first.connect)
        #expect(dns.end <= connect.start, "connecting starts once the name is resolved: \(first)")
        let address = try #require(first.remoteAddress)
        #expect(address.hasPrefix("127.0.0.1:") || address.hasPrefix("[::1]:"), "\(address)")
        try Self.expectOpened(first, protocol: "http/1.1", tls: false)
        try Self.expectReused(second, protocol: "http/1.1")
        #expect(second.remoteAddress == address)
        await named.shutdown()

        let literal = try NIOTransport()
        let (byAddress, _) = try await Self.twoCalls(to: servers.httpbin + "/bytes/2048", on: literal)
        #expect(byAddress.dns == nil, "an IP address was looked up: \(byAddress)")
        try Self.expectOpened(byAddress, protocol: "http/1.1", tls: false)
        await literal.shutdown()
    }

    @Test(arguments: [true, false])
    func tlsIsTimedAndTheProtocolIsTheOneALPNChose(allowsHTTP2: Bool) async throws {
        let servers = try ConformanceServers.httpsFromEnvironment()
        let transport = try #require(ConformanceTests.httpsTransport(allowsHTTP2: allowsHTTP2), "run scripts/test")
        let name = allowsHTTP2 ? "h2" : "http/1.1"
        let (first, second) = try await Self.twoCalls(to: servers.httpbin + "/bytes/2048", on: transport)
        try Self.expectOpened(first, protocol: name, tls: true)
        try Self.expectReused(second, protocol: name)
        await transport.shutdown()
    }

    @Test func aHopThatWaitsForAPooledConnectionIsQueuedUntilItGetsOne() async throws {
        let stream = try servers().stream
        let origin = try PoolTests.origin(stream)
        let transport = try NIOTransport(configuration: NIOTransport.Configuration(connectionsPerHost: 1))
        let executor = NIOExecutor(transport: transport).recordingTimings()
        let key = UUID().uuidString
        // The one connection, held until the gate opens.
        let held = try await executor.stream(.get |> url(stream + "/gated") |> query("key", key))
        #expect(held.timings?.queued == nil)
        let waiting = Task { try await executor.stream(.get |> url(stream + "/log")) }
        try await PoolTests.eventually { transport.connectionCounts(origin).waiting == 1 }
        try await PoolTests.open(key, stream: stream)
        _ = try await held.body.collect(upTo: 1 << 20)
        let response = try await waiting.value
        _ = try await response.body.collect(upTo: 1 << 20)
        let timings = try #require(response.timings)
        let queued = try #require(timings.queued, "\(timings)")
        #expect(queued.duration > .zero)
        #expect(timings.connection == .reused)
        #expect(queued.end <= (timings.requestStarted ?? .zero), "\(timings)")
        await transport.shutdown()
    }

    @Test func aStreamedBodysEndIsMarkedWhenItEndsNotWhenTheHeadCame() async throws {
        let stream = try servers().stream
        let executor = NIOExecutor(transport: try NIOTransport()).recordingTimings()
        let key = UUID().uuidString
        let response = try await executor.stream(.get |> url(stream + "/gated") |> query("key", key))
        let atHead = try #require(response.timings)
        #expect(atHead.firstByte != nil)
        #expect(atHead.bodyEnded == nil, "the body is still held by the gate: \(atHead)")
        try await PoolTests.open(key, stream: stream)
        _ = try await response.body.collect(upTo: 1 << 20)
        let atEnd = try #require(response.timings)
        let ended = try #require(atEnd.bodyEnded)
        #expect(ended >= (atEnd.firstByte ?? .zero))
        await executor.transport.shutdown()
    }

    @Test func aHARRecordingOfCourierNIOHasEveryPhase() async throws {
        let servers = try servers()
        let recorder = HARRecorder()
        let executor = NIOExecutor(transport: try NIOTransport()).eachHop(recorder)
        _ = try await executor.send(.get |> url(servers.otherOrigin + "/get"))
        let timings = try #require(recorder.entries.first?.timings)
        #expect((timings.dns ?? -1) >= 0 && (timings.connect ?? -1) >= 0, "\(timings)")
        #expect(timings.ssl == -1, "plain HTTP has no TLS: \(timings)")
        #expect(timings.wait > 0)
        await executor.transport.shutdown()
    }
}
