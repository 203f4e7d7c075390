import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Integration: resilience")
struct ResilienceTests {
    let executor = HTTPBin.executor()

    /// Counts requests that reach the transport.
    struct Counter: Middleware {
        let count = CountBox()
        func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
            count.increment()
            return try await next(request)
        }
    }

    final class CountBox: @unchecked Sendable {
        // Sound: `value` is only touched while `lock` is held.
        private let lock = NSLock()
        private var value = 0
        func increment() {
            lock.lock()
            value += 1
            lock.unlock()
        }
        var current: Int {
            lock.lock()
            defer { lock.unlock() }
            return value
        }
    }

    @Test func status503IsRetriedTheConfiguredNumberOfTimes() async throws {
        let counter = Counter()
        let retrying = executor.with(
            RetryMiddleware(policy: RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(20), maxDelay: .milliseconds(50))),
            counter)
        let response = try await retrying.send(try HTTPBin.request() |> path("status", 503))
        #expect(response.status == 503)
        #expect(counter.count.current == 3)
        let post = Counter()
        _ = try await executor.with(RetryMiddleware(policy: RetryPolicy(baseDelay: .milliseconds(10))), post)
            .send(try HTTPBin.request(.post) |> path("status", 503))
        #expect(post.count.current == 1)
    }

    @Test func postRedirectedWith302BecomesGetWithoutBody() async throws {
        let echo = try await executor.send(
            try HTTPBin.request(.post) |> path("redirect-to") |> query("url", "/anything") |> query("status_code", 302)
                |> json(["a": 1]) |> decode(Echo.self))
        #expect(echo.method == "GET")
        #expect(echo.data.isEmpty)
        #expect(echo.headers["Content-Type"] == nil)
    }

    @Test(arguments: [307, 308])
    func postRedirectedWith307Or308KeepsMethodAndBody(status: Int) async throws {
        let echo = try await executor.send(
            try HTTPBin.request(.post) |> path("redirect-to") |> query("url", "/anything") |> query("status_code", status)
                |> json(["a": 1]) |> decode(Echo.self))
        #expect(echo.method == "POST")
        #expect(echo.json == .object(["a": .number(1)]))
    }

    @Test func putRedirectedWith303BecomesGet() async throws {
        let echo = try await executor.send(
            try HTTPBin.request(.put) |> path("redirect-to") |> query("url", "/anything") |> query("status_code", 303)
                |> text("x") |> decode(Echo.self))
        #expect(echo.method == "GET")
    }

    @Test func crossOriginRedirectChainKeepsCredentialsDropped() async throws {
        struct Headers: Decodable, Sendable { var headers: [String: String] }
        // origin 1 → origin 2 → back to origin 1: the credential must not reappear.
        let back = try HTTPBin.url() + "/headers"
        let viaSecond = try HTTPBin.secondURL() + "/redirect-to?url=" + (back.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
        let echo = try await executor.send(
            try HTTPBin.request() |> path("redirect-to") |> query("url", viaSecond) |> bearer("CHAIN-SECRET")
                |> decode(Headers.self))
        #expect(echo.headers["Authorization"] == nil)
        let host: String = echo.headers["Host"] ?? ""
        #expect(host.hasPrefix("127.0.0.1"))
    }

    @Test func refusePolicyReturnsTheRedirect() async throws {
        let refusing = URLSessionExecutor(configuration: .ephemeral, redirects: .refuse)
        let response = try await refusing.send(
            try HTTPBin.request() |> path("redirect-to") |> query("url", "/get") |> timeout(10))
        #expect(response.status == 302)
        #expect(response.headers[.location] == "/get")
    }

    @Test func deadlineEndsASlowResponse() async throws {
        let clock = ContinuousClock()
        let start = clock.now
        let error = try await #require(throws: CourierError.self) {
            try await executor.send(try HTTPBin.request() |> path("delay", 8) |> deadline(1) |> decodeData())
        }
        guard case .timedOut = error.cause else {
            Issue.record("unexpected \(error)")
            return
        }
        // Well under the server's 8 s, with room for a loaded machine.
        #expect(clock.now - start < .seconds(5))
    }

    @Test func deadlineEndsADripThatNeverTripsTheIdleTimeout() async throws {
        // /drip sends a byte every second for 8 s: a 3 s idle timeout never fires, the deadline does.
        let clock = ContinuousClock()
        let start = clock.now
        let error = try await #require(throws: CourierError.self) {
            try await executor.send(
                try HTTPBin.request() |> path("drip") |> query("duration", 8) |> query("numbytes", 8) |> query("delay", 0)
                    |> timeout(3) |> deadline(1.5) |> decodeData())
        }
        guard case .timedOut = error.cause else {
            Issue.record("unexpected \(error)")
            return
        }
        #expect(clock.now - start < .seconds(5))
    }

    @Test func sizeLimitStopsALargeBody() async throws {
        let limited = URLSessionExecutor(configuration: .ephemeral, maximumResponseSize: 1024)
        let small = try await limited.send(try HTTPBin.request() |> path("bytes", 512) |> decodeData())
        #expect(small.count == 512)
        let error = try await #require(throws: CourierError.self) {
            try await limited.send(try HTTPBin.request() |> path("bytes", 4096) |> decodeData())
        }
        guard case .responseTooLarge(1024) = error.cause else {
            Issue.record("unexpected \(error)")
            return
        }
        let streamed = try await #require(throws: CourierError.self) {
            try await limited.send(try HTTPBin.request() |> path("stream-bytes", 100_000) |> decodeData())
        }
        guard case .responseTooLarge = streamed.cause else {
            Issue.record("unexpected \(streamed)")
            return
        }
    }

    @Test func sizeLimitCountsAfterDecompression() async throws {
        // /gzip is about 170 bytes on the wire and more once decompressed.
        let limited = URLSessionExecutor(configuration: .ephemeral, maximumResponseSize: 200)
        let error = try await #require(throws: CourierError.self) {
            try await limited.send(try HTTPBin.request() |> path("gzip") |> decodeData())
        }
        guard case .responseTooLarge(200) = error.cause else {
            Issue.record("unexpected \(error)")
            return
        }
        let roomy = URLSessionExecutor(configuration: .ephemeral, maximumResponseSize: 4096)
        #expect(try await roomy.send(try HTTPBin.request() |> path("gzip") |> decodeData()).count > 200)
    }

    @Test func sizeLimitAppliesToErrorBodies() async throws {
        let limited = URLSessionExecutor(configuration: .ephemeral, maximumResponseSize: 64)
        // /status/418 answers with a teapot drawing well over 64 bytes.
        let error = try await #require(throws: CourierError.self) {
            try await limited.send(try HTTPBin.request() |> path("status", 418))
        }
        guard case .responseTooLarge(64) = error.cause else {
            Issue.record("unexpected \(error)")
            return
        }
    }

    @Test func cancellingDuringRetryBackoffEndsOnce() async throws {
        let counter = Counter()
        // Seed 6 makes the first jittered wait 0.74 × 5 s, so the cancel lands in the backoff.
        let retrying = executor.with(
            RetryMiddleware(policy: RetryPolicy(maxAttempts: 5, baseDelay: .seconds(5), maxDelay: .seconds(5)), random: .seeded(6)),
            counter)
        let resource = try HTTPBin.request() |> path("status", 503) |> decodeData()
        let task = Task { try await retrying.send(resource) }
        while counter.count.current == 0 { try await Task.sleep(for: .milliseconds(10)) }
        try await Task.sleep(for: .milliseconds(500))
        let clock = ContinuousClock()
        let cancelledAt = clock.now
        task.cancel()
        let result = await task.result
        #expect(clock.now - cancelledAt < .seconds(1))
        switch result {
        case .failure(let error as CourierError):
            // Cancelled in the backoff; or, on a very slow machine, cancelled just as the 503
            // arrived, which is then returned rather than retried.
            switch error.cause {
            case .cancelled, .unacceptableStatus(503, _): break
            default: Issue.record("unexpected \(error)")
            }
        default:
            Issue.record("unexpected \(result)")
        }
        try await Task.sleep(for: .milliseconds(300))
        #expect(counter.count.current == 1)
    }
}
