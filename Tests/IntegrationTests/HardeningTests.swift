import Courier
import CourierConformance
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Hostile servers and careless callers against the real URLSession path.
@Suite("Integration: hardening")
struct HardeningTests {
    let executor = HTTPBin.executor()

    private func hostile(sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        try HostileServer.url(sourceLocation: sourceLocation)
    }

    private func transportFailure(_ error: CourierError?) -> TransportFailure? {
        if case .transport(let failure) = error?.cause { return failure }
        Issue.record("expected a transport failure, got \(String(describing: error))")
        return nil
    }

    // MARK: Numbers

    // MARK: Redirects

    /// The guarantees hold however the executor reads the body: plain, under a size limit, and
    /// under a sub-second timeout (the idle watchdog).
    @Test(arguments: ["plain", "limited", "sub-second"])
    func guaranteesHoldOnEveryPath(path kind: String) async throws {
        let sender = kind == "limited" ? URLSessionExecutor(configuration: .ephemeral, maximumResponseSize: 1 << 20) : executor
        func shaped(_ request: Request) -> Request { request |> timeout(kind == "sub-second" ? 4.5 : 10) }
        // A challenged 401 comes back as a response (headers kept), never hangs.
        let challenged = await expectCourierError {
            _ = try await sender.send(
                shaped(try HTTPBin.request() |> path("basic-auth", "ada", "right") |> basic(username: "ada", password: "x"))
                    |> decodeData())
        }
        #expect(challenged?.status == 401)
        let challenge: String = challenged?.response?.headers["WWW-Authenticate"] ?? ""
        #expect(challenge.hasPrefix("Basic"))
        // A cross-origin redirect drops the credential.
        let target = try HTTPBin.secondURL() + "/headers"
        struct Headers: Decodable { var headers: [String: String] }
        let echoed = try await sender.send(
            shaped(try HTTPBin.request() |> path("redirect-to") |> query("url", target) |> bearer("TOKEN-abc123"))
                |> decode(Headers.self))
        #expect(echoed.headers["Authorization"] == nil)
        // A hostile Location is refused.
        let refused = await expectCourierError {
            _ = try await sender.send(shaped(try HTTPBin.request() |> path("redirect-to") |> query("url", "file:///etc/passwd")))
        }
        #expect(transportFailure(refused)?.kind == .redirectFailed)
        // Cancellation ends the call, before the server answers: httpbin holds the answer at a
        // gate until it is opened, and the call must end while the gate is still held.
        let gate = ServerGate(httpbin: try HTTPBin.url(), executor: HTTPBin.executor())
        // Still timed (the watchdog's path), but not so short that waiting for the gate on a
        // busy machine could outlast it: the order is the question, not the speed.
        let slow = Task { try await sender.send(gate.request() |> timeout(60)) }
        try await gate.waitUntilHeld()
        slow.cancel()
        let cancelled = await expectCourierError { _ = try await slow.value }
        if case .cancelled = cancelled?.cause {} else { Issue.record("expected cancelled, got \(String(describing: cancelled))") }
        #expect(try await gate.open() == .held)
    }

    // MARK: Integrity

    @Test func aTruncatedBodyIsRetriedForIdempotentRequestsOnly() async throws {
        let attempts = Box(0)
        let retrying = executor.with(
            RetryMiddleware(policy: RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(1))), Count(attempts: attempts))
        _ = await expectCourierError { _ = try await retrying.send(Request.get |> url(try hostile()) |> path("truncated")) }
        #expect(attempts.withLock { $0 } == 3)
        attempts.withLock { $0 = 0 }
        _ = await expectCourierError { _ = try await retrying.send(Request.post |> url(try hostile()) |> path("truncated")) }
        #expect(attempts.withLock { $0 } == 1)
    }

    // MARK: Framing and URLs

    @Test func aMismatchedContentLengthIsNeverSent() async throws {
        let seen = Box([String]())
        let request = Request.post |> url(try hostile()) |> path("echo") |> body(Data(repeating: 0x41, count: 45))
            |> header(.contentLength, "5")
        let error = await expectCourierError { _ = try await executor.with(Watch(seen: seen)).send(request) }
        guard case .invalidRequest = error?.cause else {
            Issue.record("expected invalidRequest, got \(String(describing: error))")
            return
        }
        #expect(seen.withLock { $0 }.isEmpty)
    }

    @Test func anAmbiguousAuthorityIsNeverSent() async throws {
        let first = try HTTPBin.url()
        let second = try HTTPBin.secondURL().replacingOccurrences(of: "http://", with: "")
        let request = Request.get |> url(first + "\\@" + second + "/get")
        let error = await expectCourierError { _ = try await executor.send(request) }
        guard case .invalidRequest(let problems) = error?.cause else {
            Issue.record("expected invalidRequest, got \(String(describing: error))")
            return
        }
        #expect(problems.map(\.kind).contains(.invalidURL))
    }

    // MARK: Secrets

    @Test func anEchoedRequestIsRedactedInLogsAndErrors() async throws {
        let lines = Box([String]())
        let logging = executor.with(LoggingMiddleware(bodies: .on(maxBytes: 8192)) { event in
            lines.withLock { $0.append("\(event) \(event.responseBody ?? "")") }
        })
        struct Never: Decodable { var never: Int }
        let request = try HTTPBin.request(.post) |> path("anything") |> query("refresh_token", "QS-s3cr3t")
            |> header(.cookie, "session=COOKIE-v4lue") |> header(.proxyAuthorization, "Basic PROXY-cr3d")
            |> apiKey("KEY-9f8e7d") |> header("X-Tenant-Ref", "CUSTOM-x1y2", sensitive: true)
            |> form(["new_password": "PW-hunter2", "user[password]": "PW-hunter2"])
        let error = await expectCourierError { _ = try await logging.send(request |> decode(Never.self)) }
        let shown = lines.withLock { $0.joined(separator: "\n") } + "\(String(describing: error))"
        for secret in ["QS-s3cr3t", "COOKIE-v4lue", "PROXY-cr3d", "KEY-9f8e7d", "CUSTOM-x1y2", "PW-hunter2"] {
            #expect(!shown.contains(secret), "\(secret) leaked")
        }
        #expect(shown.contains("Proxy-Authorization"))
    }
}

/// Records the URL of every request that reaches the transport.
private struct Watch: Middleware {
    let seen: Box<[String]>
    func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
        seen.withLock { $0.append((try? request.validatedURL().absoluteString) ?? "") }
        return try await next(request)
    }
}

/// Counts attempts that reach the transport.
private struct Count: Middleware {
    let attempts: Box<Int>
    func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
        attempts.withLock { $0 += 1 }
        return try await next(request)
    }
}

/// A 401 with a Basic challenge: FoundationNetworking waits for a credential Courier never gives,
/// so Courier hands the 401 back. On the `data(for:)` path its body is lost on Linux (the task has
/// to be cancelled); with a response size limit (the delegate path) the body arrives.
/// A status below 100 (`HTTP/1.1 000`, `099`), however the body is framed: URLSession (libcurl)
/// refuses the head; Courier says so as a bad response. (AsyncHTTPClient traps on these heads:
/// its package's HostileHeadTests run them in a child process.)
@Suite("Integration: heads below 100")
struct HeadsBelow100Tests {
    @Test(arguments: [
        "status=000&framing=length", "status=000&framing=chunked", "status=000&framing=close", "status=099&framing=length",
        "status=000&framing=length&body=",
    ])
    func aStatusBelow100IsABadResponse(head: String) async throws {
        let request = Request.get |> url(try HostileServer.url() + "/head?" + head) |> deadline(10)
        for executor in [URLSessionExecutor(configuration: .ephemeral), URLSessionExecutor(configuration: .ephemeral, maximumResponseSize: 1 << 20)] {
            let sent = await expectCourierError { _ = try await executor.send(request) }
            #expect(transportFailure(sent)?.kind == .badResponse, "\(String(describing: sent))")
            let streamed = await expectCourierError { _ = try await executor.stream(request).body.collect(upTo: 1 << 20) }
            #expect(transportFailure(streamed)?.kind == .badResponse, "\(String(describing: streamed))")
        }
    }
}

@Suite("Integration: refused redirects")
struct RefusedRedirectTests {
    /// A 302 whose body FoundationNetworking drops is the response, on every path: not a
    /// truncation.
    @Test func aRefusedRedirectWithABodyIsReturnedAsTheResponse() async throws {
        let base = try HostileServer.url()
        let request = Request.get |> url(base + "/redirect") |> query("to", "/echo") |> query("body", 1) |> timeout(10)
        let plain = URLSessionExecutor(configuration: .ephemeral, redirects: .refuse)
        let limited = URLSessionExecutor(configuration: .ephemeral, redirects: .refuse, maximumResponseSize: 1 << 20)
        for executor in [plain, limited] {
            let response = try await executor.send(request)
            #expect(response.status == 302)
            #expect(response.headers[.location] == "/echo")
            let streamed = try await executor.stream(request)
            #expect(streamed.status == 302)
            _ = try await streamed.body.collect(upTo: 1 << 20)
        }
    }
}

@Suite("Integration: challenged 401")
struct ChallengeTests {
    private func challenge() throws -> Request {
        let base = try HostileServer.url()
        return .get |> url(base + "/challenge")
    }

    @Test func aChallenged401ComesBackWithoutHanging() async throws {
        // A hang would end in the 10 s deadline's error: the 401 itself is the proof. Without a
        // timeout or size limit, `send` gathers the body through the session's delegate (no
        // longer `data(for:)`, which lost the body of a challenged 401 on Linux): it keeps it.
        let response = try await HTTPBin.executor().send(try challenge() |> deadline(10))
        #expect(response.status == 401)
        #expect(response.headers["WWW-Authenticate"] == "Basic realm=\"courier\"")
        #expect(!response.body.isEmpty)
    }

    @Test func aChallenged401UnderATimeoutKeepsItsBody() async throws {
        // A timeout is watched by the exchange as the body arrives, so the body streams: the
        // challenged 401 comes back with it, on every platform.
        let response = try await HTTPBin.executor().send(try challenge() |> timeout(10))
        #expect(response.status == 401)
        #expect(!response.body.isEmpty)
    }

    @Test func aStreamedChallenged401ComesBackToo() async throws {
        let response = try await HTTPBin.executor().stream(try challenge())
        #expect(response.status == 401)
        _ = try await response.body.collect(upTo: 1 << 20)
    }
}
