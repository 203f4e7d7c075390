import Courier
@testable import CourierNIO
import Foundation
import NIOConcurrencyHelpers
import Testing

/// HTTP/2 streams reset and connections sent away by a server (scripts/h2_hostile_server.py, TLS
/// with the test CA, ALPN h2 only): each a typed, transient failure; a reset mid-body is a
/// truncated body whichever way the body is read; the transport goes on working afterwards.
@Suite("NIOExecutor: HTTP/2 resets and GOAWAY", .serialized, .timeLimit(.minutes(2)))
struct HTTP2ResetTests {
    static func executor(connectionsPerHost: Int = 8) throws -> (NIOExecutor, String) {
        let environment = ProcessInfo.processInfo.environment
        let directory = try #require(environment["COURIER_TLS_DIR"], "run the tests with scripts/test, which starts the servers")
        let address = try #require(environment["COURIER_H2_HOSTILE_URL"], "run the tests with scripts/test, which starts the servers")
        let authority = try TLSOptions.Certificate(contentsOf: URL(fileURLWithPath: directory + "/ca.pem"))
        let configuration = NIOTransport.Configuration(connectionsPerHost: connectionsPerHost, tls: TLSOptions(trust: .only([authority])))
        return (try NIOExecutor(configuration: configuration), address)
    }

    static func failure(_ error: CourierError?) -> TransportFailure? {
        guard case .transport(let failure)? = error?.cause else { return nil }
        return failure
    }

    @Test func aResetOrGoawayBeforeTheHeadIsATransientLostConnection() async throws {
        let (executor, address) = try Self.executor()
        defer { Task { await executor.transport.shutdown() } }
        for path in ["/refused", "/goaway-unprocessed"] {
            // `redirects` aside, the exchange sends an idempotent GET once more after a lost
            // connection; a POST shows the failure itself.
            let error = await #expect(throws: CourierError.self) { _ = try await executor.send(.post |> url(address + path)) }
            #expect(Self.failure(error)?.kind == .connectionLost, "\(path): \(String(describing: error))")
            #expect(error?.isTransient == true)
            #expect(!"\(String(describing: error))".contains("NIOHTTP2"), "a type name instead of a reason")
        }
        let refused = await #expect(throws: CourierError.self) { _ = try await executor.send(.post |> url(address + "/refused")) }
        #expect(Self.failure(refused)?.message.contains("not processed") == true)
        let next = try await executor.send(.get |> url(address + "/ok"))
        #expect(next.body == Data("hello".utf8))
    }

    @Test func aResetOrGoawayMidBodyIsATruncatedBodyGatheredOrStreamed() async throws {
        let (executor, address) = try Self.executor()
        defer { Task { await executor.transport.shutdown() } }
        for path in ["/reset-mid-body", "/goaway-mid-body"] {
            let gathered = await #expect(throws: CourierError.self) { _ = try await executor.send(.get |> url(address + path)) }
            #expect(Self.failure(gathered)?.kind == .truncatedBody, "\(path): \(String(describing: gathered))")
            #expect(gathered?.isTransient == true)
            let response = try await executor.stream(.get |> url(address + path))
            #expect(response.status == 200)
            let streamed = await #expect(throws: CourierError.self) { _ = try await response.body.collect(upTo: 1 << 20) }
            #expect(Self.failure(streamed)?.kind == .truncatedBody, "\(path): \(String(describing: streamed))")
        }
        let next = try await executor.send(.get |> url(address + "/ok"))
        #expect(next.status == 200)
    }

    /// A whole exchange ends its stream without a reset from the client, one request after
    /// another and many at once (each used to end with RST_STREAM CANCEL: a frame, a TLS record
    /// and a write too many per request, and what servers guarding against rapid resets count).
    /// A stream whose exchange did not finish is still reset: an answer before the whole upload.
    @Test func aWholeExchangeSendsNoResetAndAnUnfinishedOneDoes() async throws {
        let (executor, address) = try Self.executor()
        defer { Task { await executor.transport.shutdown() } }
        for _ in 0..<5 {
            let response = try await executor.send(.get |> url(address + "/ok"))
            #expect(response.body == Data("hello".utf8))
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 { group.addTask { _ = try await executor.send(.get |> url(address + "/ok")) } }
            try await group.waitForAll()
        }
        let streamed = try await executor.stream(.get |> url(address + "/ok"))
        #expect(try await streamed.body.collect(upTo: 100) == Data("hello".utf8))
        let resets = try await executor.send(.get |> url(address + "/resets"))
        #expect(String(decoding: resets.body, as: UTF8.self) == "0", "the client reset streams whose exchange was whole")
        // An upload the server answers before reading it: its stream is reset (the rest is not sent).
        let (never, _) = AsyncStream<Data>.makeStream()
        let early = try await executor.send(.post |> url(address + "/ok") |> upload(never, length: 1000))
        #expect(early.status == 200)
        let after = try await executor.send(.get |> url(address + "/resets"))
        #expect(String(decoding: after.body, as: UTF8.self) == "1")
    }

    /// The client asks for no server push and lets a server send a response's first 4 MiB (and
    /// 16 MiB over the connection) before the reader takes them: with HTTP/2's default 64 KiB
    /// window one response moved at most 64 KiB a round trip. The server here sends a megabyte at
    /// once, which breaks the connection with a flow-control error unless the windows allow it.
    @Test func theClientsWindowsLetAMegabyteComeAtOnceAndPushIsOff() async throws {
        let (executor, address) = try Self.executor()
        defer { Task { await executor.transport.shutdown() } }
        let big = try await executor.send(.get |> url(address + "/megabyte"))
        #expect(big.body.count == 1 << 20)
        struct Settings: Decodable {
            var enable_push: Int
            var initial_window_size: Int
            var connection_window: Int
        }
        let settings = try await executor.send(.get |> url(address + "/settings") |> decode(Settings.self))
        #expect(settings.enable_push == 0)
        #expect(settings.initial_window_size == HTTP2Connection.streamWindow)
        #expect(settings.connection_window > 8 << 20, "the connection's window was raised")
    }

    /// A connection the client closes (here at shutdown) is closed with a GOAWAY first (RFC 9113
    /// §6.8), so the server reads a goodbye rather than a dropped connection.
    @Test func aConnectionTheClientClosesGetsAGoaway() async throws {
        let (executor, address) = try Self.executor()
        let key = UUID().uuidString
        let marked = try await executor.send(.get |> url(address + "/mark?key=" + key))
        #expect(marked.status == 200)
        await executor.transport.shutdown()
        let (other, _) = try Self.executor()
        defer { Task { await other.transport.shutdown() } }
        // The server's thread for that connection reads the GOAWAY on its own time: asked again
        // until it has (the bound is no guess at the machine's speed, only a stop for a hang).
        var goodbyes = ""
        for _ in 0..<400 {
            goodbyes = String(decoding: try await other.send(.get |> url(address + "/goodbyes?key=" + key)).body, as: UTF8.self)
            if goodbyes != "0" { break }
            try await Task.sleep(for: .milliseconds(25))
        }
        #expect(goodbyes == "1")
    }

    /// A hostile `:status` over HTTP/2 is read by the same rules as an HTTP/1.1 status line: a
    /// typed `badResponse`, never a trap (AsyncHTTPClient traps on a status below 100), and the
    /// transport goes on working.
    @Test(arguments: ["042", "099", "0", "abc", "2000", "-20", "20x", "+20"])
    func aHostileStatusIsABadResponse(status: String) async throws {
        let (executor, address) = try Self.executor()
        defer { Task { await executor.transport.shutdown() } }
        let error = await #expect(throws: CourierError.self) { _ = try await executor.send(.get |> url(address + "/status/" + status)) }
        #expect(Self.failure(error)?.kind == .badResponse, "\(status): \(String(describing: error))")
        #expect(!"\(String(describing: error))".contains("NIOHTTP2"), "a type name instead of a reason")
        let next = try await executor.send(.get |> url(address + "/ok"))
        #expect(next.body == Data("hello".utf8))
    }

    /// An informational head before the answer (103 Early Hints) is skipped; a PING from the
    /// server is answered and the stream goes on.
    @Test func earlyHintsAreSkippedAndAPingIsAnswered() async throws {
        let (executor, address) = try Self.executor()
        defer { Task { await executor.transport.shutdown() } }
        for path in ["/early-hints", "/ping"] {
            let response = try await executor.send(.get |> url(address + path))
            #expect(response.status == 200, "\(path)")
            #expect(response.body == Data("hello".utf8), "\(path)")
        }
    }

    /// A server that allows one stream at a time (SETTINGS_MAX_CONCURRENT_STREAMS 1) is never
    /// sent a second: with one connection allowed, eight concurrent hops wait in the pool's line
    /// for its one stream and all succeed. They are POSTs, which the exchange never sends twice,
    /// so a stream too many (a protocol error that closes the connection) would fail one of them.
    @Test func aServersStreamLimitIsKept() async throws {
        let (executor, address) = try Self.executor(connectionsPerHost: 1)
        defer { Task { await executor.transport.shutdown() } }
        let limited = try await executor.send(.get |> url(address + "/limit-streams"))
        #expect(limited.status == 200)
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<8 { group.addTask { try await executor.send(.post |> url(address + "/ok")).status } }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 200, count: 8))
        let origin = try RequestTarget(url: address + "/ok").origin
        #expect(executor.transport.connectionCounts(origin) == .init(open: 1, http2: 1), "the hops shared the one connection")
    }

    /// A stream a `GOAWAY` left out was not processed (RFC 9113 §8.7): even a POST is sent again,
    /// once, on a new connection, and succeeds there; the connection sent away is not used again.
    @Test func aStreamAGoAwayLeftOutIsSentAgainElsewhereWhateverItsMethod() async throws {
        let (executor, address) = try Self.executor()
        defer { Task { await executor.transport.shutdown() } }
        let hops = Counter()
        let key = UUID().uuidString
        let response = try await executor.eachHop(hops).send(.post |> url(address + "/goaway-once") |> query("key", key) |> json(["n": 1]))
        #expect(response.body == Data("hello".utf8))
        #expect(hops.count == 2, "the hop and its one resend")
        // A body that cannot be read again is not sent again: the failure says why.
        let once = AsyncStream<Data> { $0.yield(Data("{}".utf8)); $0.finish() }
        let error = await #expect(throws: CourierError.self) {
            _ = try await executor.send(.post |> url(address + "/goaway-once") |> query("key", UUID().uuidString) |> upload(once))
        }
        guard case .transport(let failure)? = error?.cause else { return }
        #expect(failure.requestWasNotProcessed == true, "\(failure)")
        #expect(failure.message.contains("not processed"), "\(failure.message)")
    }

    /// Retry middleware acts on it as on a lost HTTP/1.1 connection: a GET is sent again, by the
    /// exchange once and then by the middleware.
    @Test func aRefusedStreamIsSentAgainForAnIdempotentRequest() async throws {
        let (executor, address) = try Self.executor()
        defer { Task { await executor.transport.shutdown() } }
        let attempts = Counter()
        let hops = Counter()
        let retrying = executor.eachHop(hops).with(attempts).with(RetryMiddleware(policy: RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(1))))
        await #expect(throws: CourierError.self) { _ = try await retrying.send(.get |> url(address + "/refused")) }
        #expect(attempts.count == 3)
        // Each attempt: the hop, and the exchange's one resend of an idempotent request whose
        // connection was lost before any answer.
        #expect(hops.count == 6)
    }
}

/// Counts the requests that pass it.
final class Counter: Middleware, Sendable {
    private let passed = NIOLockedValueBox(0)
    var count: Int { passed.withLockedValue { $0 } }
    func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
        passed.withLockedValue { $0 += 1 }
        return try await next(request)
    }
}
