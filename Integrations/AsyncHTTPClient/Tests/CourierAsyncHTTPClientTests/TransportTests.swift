import AsyncHTTPClient
import Courier
import CourierAsyncHTTPClient
import CourierConformance
import Foundation
import NIOHTTPCompression
import NIOPosix
import Testing

/// What this transport does beyond the conformance suite: the limits FoundationNetworking has and
/// AsyncHTTPClient does not, the client it accepts, and its own failure mapping.
@Suite("AsyncHTTPClientExecutor", .serialized, .timeLimit(.minutes(3)))
struct TransportTests {
    // MARK: The client it borrows

    @Test func aClientThatFollowsRedirectsOrDecompressesIsRefused() async throws {
        var following = HTTPClient.Configuration()
        following.redirectConfiguration = .follow(max: 5, allowCycles: false)
        var decompressing = AsyncHTTPClientExecutor.clientConfiguration()
        decompressing.decompression = .enabled(limit: .ratio(10))
        for (configuration, problem) in [(following, "follows redirects"), (decompressing, "decompresses bodies")] {
            let client = HTTPClient(eventLoopGroup: .singletonMultiThreadedEventLoopGroup, configuration: configuration)
            #expect {
                _ = try AsyncHTTPClientExecutor(client: client)
            } throws: { error in
                guard let error = error as? AsyncHTTPClientExecutor.ConfigurationError else { return false }
                return error.problems.contains(problem) && error.description.contains("clientConfiguration()")
            }
            try await client.shutdown()
        }
        #expect(throws: AsyncHTTPClientExecutor.ConfigurationError.self) { _ = try AsyncHTTPClientExecutor(client: .shared) }
        _ = try makeExecutor()
    }

    /// The one-liner: no client to make or shut down, and Courier's guarantees still hold (its
    /// redirect policy drops credentials across origins, it inflates gzip itself, no trace header).
    @Test func theSharedExecutorNeedsNoClientAndKeepsCourierGuarantees() async throws {
        let servers = try servers()
        let shared = AsyncHTTPClientExecutor.shared
        #expect(shared.client === AsyncHTTPClientExecutor.shared.client)
        let target = servers.otherOrigin + "/headers"
        let hop = try await shared.send(
            .get |> baseURL(servers.httpbin) |> path("redirect-to") |> query("url", target) |> bearer("SHARED-SECRET"))
        let echoed = String(decoding: hop.body, as: UTF8.self)
        #expect(hop.status == 200)
        #expect(!echoed.contains("SHARED-SECRET"))
        #expect(!echoed.lowercased().contains("traceparent"))
        let gzipped = try await shared.send(.get |> baseURL(servers.httpbin) |> path("gzip"))
        #expect(String(decoding: gzipped.body, as: UTF8.self).contains("\"gzipped\": true"))
        // A copy takes its own policy and limit; the client stays the shared one.
        var limited = shared
        limited.maximumResponseSize = 10
        await #expect(throws: CourierError.self) { _ = try await limited.send(.get |> baseURL(servers.httpbin) |> path("bytes", 100)) }
        #expect(limited.client === shared.client)
    }

    @Test func noTraceHeaderIsAdded() async throws {
        let echoed = try await makeExecutor().send(.get |> baseURL(try servers().httpbin) |> path("headers"))
        let text = String(decoding: echoed.body, as: UTF8.self).lowercased()
        #expect(echoed.status == 200)
        #expect(!text.contains("traceparent"))
    }

    // MARK: Bodies FoundationNetworking drops

    @Test func aDeliveredRedirectKeepsItsBody() async throws {
        let executor = try makeExecutor(redirects: .refuse)
        let request = .get |> baseURL(try servers().hostile) |> path("redirect") |> query("to", "/echo") |> query("body", "1")
        let response = try await executor.send(request)
        #expect(response.status == 302)
        #expect(String(decoding: response.body, as: UTF8.self).contains("Moved"))
        let streamed = try await executor.stream(request)
        #expect(String(decoding: try await streamed.body.collect(upTo: 1 << 20), as: UTF8.self).contains("Moved"))
    }

    @Test func aChallenged401KeepsItsBodyWithoutALimit() async throws {
        let response = try await makeExecutor().send(.get |> baseURL(try servers().hostile) |> path("challenge"))
        #expect(response.status == 401)
        #expect(String(decoding: response.body, as: UTF8.self).contains("login required"))
        #expect(response.headers["WWW-Authenticate"] != nil)
    }

    // MARK: Compression

    @Test func aBodyCutInsideTheGzipStreamIsATransientTruncation() async throws {
        let request = .get |> baseURL(try servers().hostile) |> path("gzip-truncated")
        let executor = try makeExecutor()
        let error = await #expect(throws: CourierError.self) { _ = try await executor.send(request) }
        guard case .transport(let failure)? = error?.cause else { Issue.record("\(String(describing: error))"); return }
        #expect(failure.kind == .truncatedBody)
        #expect(error?.isTransient == true)
        let streamed = try await executor.stream(request)
        await #expect(throws: CourierError.self) { _ = try await streamed.body.collect(upTo: 1 << 20) }
    }

    @Test func aGzipBombStopsAtTheLimitInBoundedMemory() async throws {
        let hostile = try servers().hostile
        let executor = try makeExecutor(maximumResponseSize: 8 << 20)
        // The server compresses its 1 GiB of zeros once, ahead of the timed part.
        _ = try await executor.send(.get |> baseURL(hostile) |> path("gzip-bomb") |> query("prepare", "1") |> timeout(120))
        let before = residentBytes()
        let error = await #expect(throws: CourierError.self) {
            _ = try await executor.send(.get |> baseURL(hostile) |> path("gzip-bomb"))
        }
        guard case .responseTooLarge(8 << 20)? = error?.cause else { Issue.record("\(String(describing: error))"); return }
        let streamed = try await executor.stream(.get |> baseURL(hostile) |> path("gzip-bomb"))
        await #expect(throws: CourierError.self) {
            for try await _ in streamed.body {}
        }
        if let before, let after = residentBytes() {
            // The limit (8 MiB) plus a piece and the buffers of the few reads in flight.
            #expect(after - before < 64 << 20, "resident memory grew by \(after - before) bytes")
        }
    }

    // MARK: Backpressure

    @Test func aSlowReaderSlowsTheServer() async throws {
        let stream = try servers().stream
        let key = UUID().uuidString
        let executor = try makeExecutor()
        let response = try await executor.stream(
            .get |> baseURL(stream) |> path("bytes") |> query("size", 1 << 30) |> query("key", key),
            options: StreamOptions(bufferLimit: 1 << 20))
        var iterator = response.body.makeAsyncIterator()
        var read = 0
        while read < 4 << 20, let chunk = try await iterator.next() { read += chunk.count }
        // The reader stops reading for a while: socket buffers fill and the server must wait.
        try await Task.sleep(for: .milliseconds(800))
        let sent = try await executor.send(.get |> baseURL(stream) |> path("sent") |> query("key", key) |> decode(Sent.self))
        #expect(!sent.done)
        #expect(sent.sent < 64 << 20, "the server sent \(sent.sent) bytes to a reader that took \(read)")
        response.body.cancel()
    }

    @Test func breakingOutOfAFastBodyStopsTheServer() async throws {
        let stream = try servers().stream
        let key = UUID().uuidString
        let executor = try makeExecutor()
        let response = try await executor.stream(.get |> baseURL(stream) |> path("bytes") |> query("size", 1 << 30) |> query("key", key))
        var read = 0
        for try await chunk in response.body {
            read += chunk.count
            if read >= 20 << 20 { break }
        }
        // The server's writes fail once the connection is closed: wait until it says it stopped
        // writing (the disconnect, or the end of its 1 GiB), then look at how far it got.
        var sent = Sent(sent: 0, done: false)
        while !sent.done {
            try await Task.sleep(for: .milliseconds(50))
            sent = try await executor.send(.get |> baseURL(stream) |> path("sent") |> query("key", key) |> decode(Sent.self))
        }
        #expect(sent.sent < read + (64 << 20), "the server sent \(sent.sent) bytes after a stop at \(read)")
    }

    @Test func aSlowReaderDoesNotTripTheIdleTimeout() async throws {
        // 0.5 s of idle time allowed; the reader pauses 0.8 s three times, the server never does.
        // A timer that counted the reader's pauses would fire on every try; a stall of this
        // machine long enough to starve the server for half a second does not repeat, so only
        // the third timeout in a row fails.
        var timeouts: [CourierError] = []
        while true {
            do {
                let read = try await readSlowly()
                #expect(read == 6 << 20)
                return
            } catch let error as CourierError {
                guard case .timedOut = error.cause else { throw error }
                timeouts.append(error)
                if timeouts.count == 3 {
                    Issue.record("the idle timeout fired on three tries in a row: \(error)")
                    return
                }
            }
        }
    }

    /// Reads 6 MiB under a 0.5 s idle timeout, pausing 0.8 s after each of the first three chunks.
    private func readSlowly() async throws -> Int {
        let response = try await makeExecutor().stream(
            .get |> baseURL(try servers().stream) |> path("bytes") |> query("size", 6 << 20) |> timeout(0.5),
            options: StreamOptions(bufferLimit: 1 << 20))
        var read = 0
        var pauses = 0
        var iterator = response.body.makeAsyncIterator()
        while let chunk = try await iterator.next() {
            read += chunk.count
            if pauses < 3 {
                pauses += 1
                try await Task.sleep(for: .milliseconds(800))
            }
        }
        return read
    }

    // MARK: Requests

    @Test func repeatedCookiesTravelAsOneFieldAndOtherRepeatsStay() async throws {
        struct Echo: Decodable { var headers: [String: String] }
        let echo = try await makeExecutor().send(
            .get |> baseURL(try servers().httpbin) |> path("headers") |> addingHeader("Cookie", "a=1") |> addingHeader("Cookie", "b=2")
                |> addingHeader("X-Tag", "one") |> addingHeader("X-Tag", "two") |> decode(Echo.self))
        #expect(echo.headers["Cookie"] == "a=1; b=2")
        #expect(echo.headers["X-Tag"] == "one,two" || echo.headers["X-Tag"] == "one, two")
    }

    /// AsyncHTTPClient hands `Set-Cookie` fields over apart, so each is one cookie, a comma in it
    /// included (RFC 6265bis): a server that echoes input into a cookie value cannot be made to
    /// set a second cookie by `, admin=1`. Before, the jar split every field on every transport.
    @Test func eachSetCookieFieldIsOneCookieCommasIncluded() async throws {
        let store = CookieStore()
        let executor = try makeExecutor().eachHop(CookieMiddleware(store))
        _ = try await executor.send(
            .get |> baseURL(try servers().httpbin) |> path("response-headers") |> query("Set-Cookie", "name=ada, admin=1; Path=/")
                |> query("Set-Cookie", "b=2; Expires=Wed, 21 Oct 2037 07:28:00 GMT; Path=/"))
        let cookies = store.jar.cookies.sorted { $0.name < $1.name }
        #expect(cookies.map(\.name) == ["b", "name"])
        #expect(cookies.last?.value == "ada, admin=1")
    }

    // MARK: Failures

    @Test func aRefusedConnectionIsTransient() async throws {
        // A port nothing listens on: bind one, close it, connect to it.
        let error = await #expect(throws: CourierError.self) {
            _ = try await makeExecutor().send(.get |> url("http://127.0.0.1:9/") |> timeout(5))
        }
        guard case .transport(let failure)? = error?.cause else { Issue.record("\(String(describing: error))"); return }
        #expect(failure.kind == .cannotConnect)
        #expect(error?.isTransient == true)
    }

    @Test func anInvalidRequestIsNeverSent() async throws {
        let error = await #expect(throws: CourierError.self) {
            _ = try await makeExecutor().send(.get |> url("http://127.0.0.1:9/") |> header("X-Bad", "a\r\nInjected: 1"))
        }
        guard case .invalidRequest? = error?.cause else { Issue.record("\(String(describing: error))"); return }
    }

    @Test func errorsDoNotShowTheRequestsSecrets() async throws {
        let error = await #expect(throws: CourierError.self) {
            _ = try await makeExecutor().send(.get |> url("http://127.0.0.1:9/") |> bearer("s3cr3t-token") |> timeout(5))
        }
        let shown = [String(describing: error), String(reflecting: error), error?.localizedDescription ?? ""].joined()
        #expect(!shown.contains("s3cr3t-token"))
    }
}

/// What the stream server's `/sent` reports.
struct Sent: Decodable {
    var sent: Int
    var done: Bool
}
