import Courier
import CourierConformance
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Integration: httpbin")
struct HTTPBinTests {
    let executor = HTTPBin.executor()

    @Test func queryArrivesExactlyAsMeant() async throws {
        let echo = try await executor.send(
            try HTTPBin.request() |> path("anything") |> query("q", "a+b c&d=e#f") |> query("emoji", "😀 ü")
                |> query("id", [1, 2]) |> query("missing", Optional<Int>.none) |> decode(Echo.self))
        #expect(echo.args["q"] == .one("a+b c&d=e#f"))
        #expect(echo.args["emoji"] == .one("😀 ü"))
        #expect(echo.args["id"] == .many(["1", "2"]))
        #expect(echo.args["missing"] == nil)
        #expect(echo.method == "GET")
    }

    @Test func pathSegmentsStayInsideThePath() async throws {
        let echo = try await executor.send(
            try HTTPBin.request() |> path("anything", "a b", "x?y#z") |> decode(Echo.self))
        #expect(echo.url.hasSuffix("/anything/a%20b/x%3Fy%23z") || echo.url.hasSuffix("/anything/a b/x?y#z"))
        #expect(echo.args.isEmpty)
    }

    @Test func jsonPost() async throws {
        let echo = try await executor.send(
            try HTTPBin.request(.post) |> path("anything") |> json(["name": "Zoë", "note": "a+b&c"]) |> decode(Echo.self))
        #expect(echo.method == "POST")
        #expect(echo.json == .object(["name": .string("Zoë"), "note": .string("a+b&c")]))
        #expect(echo.headers["Content-Type"] == "application/json")
    }

    @Test func formPost() async throws {
        let echo = try await executor.send(
            try HTTPBin.request(.post) |> path("anything") |> form(["user": "ada", "note": "a b+c&d=é~"])
                |> decode(Echo.self))
        #expect(echo.form["user"] == .one("ada"))
        #expect(echo.form["note"] == .one("a b+c&d=é~"))
        #expect(echo.headers["Content-Type"] == "application/x-www-form-urlencoded")
    }

    @Test func customHeaders() async throws {
        struct Headers: Decodable, Sendable { var headers: [String: String] }
        let echo = try await executor.send(
            try HTTPBin.request() |> path("headers") |> header("X-Custom", "value 1") |> userAgent("CourierTests/1.0")
                |> accept(.json) |> decode(Headers.self))
        #expect(echo.headers["X-Custom"] == "value 1")
        #expect(echo.headers["User-Agent"] == "CourierTests/1.0")
        #expect(echo.headers["Accept"] == "application/json")
    }

    @Test func bearerAuth() async throws {
        struct Auth: Decodable, Sendable { var authenticated: Bool; var token: String }
        let auth = try await executor.send(try HTTPBin.request() |> path("bearer") |> bearer("t0k3n") |> decode(Auth.self))
        #expect(auth.authenticated && auth.token == "t0k3n")
        let error = try await #require(throws: CourierError.self) {
            try await executor.send(try HTTPBin.request() |> path("bearer") |> decode(Auth.self))
        }
        guard case .unacceptableStatus(401, _) = error.cause else {
            Issue.record("unexpected \(error)")
            return
        }
    }

    @Test func basicAuth() async throws {
        struct Auth: Decodable, Sendable { var authenticated: Bool; var user: String }
        let good = try await executor.send(
            try HTTPBin.request() |> path("basic-auth", "ada", "p@ss w0rd") |> basic(username: "ada", password: "p@ss w0rd")
                |> decode(Auth.self))
        #expect(good.authenticated && good.user == "ada")
        let error = try await #require(throws: CourierError.self) {
            try await executor.send(
                try HTTPBin.request() |> path("basic-auth", "ada", "right") |> basic(username: "ada", password: "wrong")
                    |> decode(Auth.self))
        }
        #expect(error.status == 401)
        #expect(!error.description.contains("wrong"))
    }

    @Test func notFoundIsATypedErrorWithBody() async throws {
        let error = try await #require(throws: CourierError.self) {
            try await executor.send(try HTTPBin.request() |> path("status", 404) |> decode(Echo.self))
        }
        guard case .unacceptableStatus(404, nil) = error.cause else {
            Issue.record("unexpected \(error)")
            return
        }
        #expect(error.response?.status == 404)
        #expect(error.response?.body == Data())
        #expect(error.request?.path == "/status/404")
    }

    @Test func typedErrorBodyFromServer() async throws {
        // httpbin has no endpoint that sends a JSON body with an error status, so accept only 201
        // and let /anything's 200 JSON echo stand in for the server's error body.
        struct EchoedError: Decodable, Error, Sendable { var method: String }
        let resource = (try HTTPBin.request() |> path("anything") |> decode(Echo.self, error: EchoedError.self))
            .validate(status: 201...201)
        let error = try await #require(throws: CourierError.self) { try await executor.send(resource) }
        #expect(error.status == 200)
        #expect(error.errorBody(as: EchoedError.self)?.method == "GET")
    }

    @Test func noContent() async throws {
        let resource = try HTTPBin.request() |> path("status", 204) |> decodeEmpty()
        try await executor.send(resource)
        let optional = try await executor.send(try HTTPBin.request() |> path("status", 204) |> decodeIfPresent(Echo.self))
        #expect(optional == nil)
        let head = try await executor.response(for: try HTTPBin.request(.head) |> path("get") |> decodeEmpty())
        #expect(head.response.status == 200 && head.response.body.isEmpty)
    }

    @Test func gzipIsDecompressed() async throws {
        struct Gzipped: Decodable, Sendable { var gzipped: Bool }
        let value = try await executor.send(try HTTPBin.request() |> path("gzip") |> decode(Gzipped.self))
        #expect(value.gzipped)
    }

    @Test func completionHandlerForm() async throws {
        let resource = try HTTPBin.request() |> path("anything") |> query("via", "callback") |> decode(Echo.self)
        let result = await withCheckedContinuation { (done: CheckedContinuation<Result<Echo, CourierError>, Never>) in
            executor.send(resource) { done.resume(returning: $0) }
        }
        #expect(try result.get().args["via"] == .one("callback"))
    }

    /// FoundationNetworking joins repeated `Set-Cookie` fields with ", ": `a=b` then `=` arrived as
    /// `a=b, =`, which the jar took for one cookie `a` whose value was `b, =`. The URLSession
    /// transport now splits every comma outside an `Expires` date: `a=b` is stored whole and `=`
    /// refused.
    @Test func aValidCookieBeforeAnInvalidOneStaysWholeOverURLSession() async throws {
        let store = CookieStore()
        let refused = Box<[CookieRejection]>([])
        let executor = HTTPBin.executor().eachHop(CookieMiddleware(store) { why, _ in refused.withLock { $0.append(why) } })
        _ = try await executor.send(
            try HTTPBin.request() |> path("response-headers") |> query("Set-Cookie", "a=b; Path=/") |> query("Set-Cookie", "=")
                |> query("Set-Cookie", "c=d; Expires=Wed, 21 Oct 2037 07:28:00 GMT; Path=/"))
        let cookies = store.jar.cookies.sorted { $0.name < $1.name }
        #expect(cookies.map(\.name) == ["a", "c"])
        #expect(cookies.first?.value == "b")
        #expect(refused.withLock { $0 } == [.noNameValuePair])
    }

    @Test func completionHandlerCancellation() async throws {
        // httpbin holds the answer at a gate: the handle is cancelled once the server has the
        // request, and the call must end while the gate is still held (order, not a stopwatch).
        let gate = ServerGate(httpbin: try HTTPBin.url(), executor: HTTPBin.executor())
        let resource = gate.request() |> decodeData()
        let handle = Box<CancellationHandle?>(nil)
        let watcher = Task {
            try await gate.waitUntilHeld()
            while handle.withLock({ $0 == nil }) { try await Task.sleep(for: .milliseconds(5)) }
            handle.withLock { $0?.cancel() }
        }
        let result = await withCheckedContinuation { (done: CheckedContinuation<Result<Data, CourierError>, Never>) in
            handle.withLock { $0 = executor.send(resource) { done.resume(returning: $0) } }
        }
        try await watcher.value
        guard case .failure(let error) = result, case .cancelled = error.cause else {
            Issue.record("unexpected \(result)")
            return
        }
        #expect(try await gate.open() == .held)
    }

    @Test func callbackExecutorOverDataTask() async throws {
        let executor = CallbackExecutor.dataTask(session: URLSession(configuration: .ephemeral))
        let echo = try await executor.send(
            try HTTPBin.request() |> path("anything") |> query("via", "dataTask") |> decode(Echo.self))
        #expect(echo.args["via"] == .one("dataTask"))
    }

    @Test func middlewareAroundTheNetwork() async throws {
        let events = LockedEvents()
        let executor = executor.with(
            DefaultHeadersMiddleware(["X-Default": "on"]), LoggingMiddleware { events.append($0) })
        let echo = try await executor.send(
            try HTTPBin.request() |> path("anything") |> bearer("NET-SECRET") |> decode(Echo.self))
        #expect(echo.headers["X-Default"] == "on")
        #expect(events.all.map(\.kind) == [.request, .response])
        #expect(!events.all.map(\.description).joined().contains("NET-SECRET"))
    }
}

/// Collects log events from any thread.
final class LockedEvents: @unchecked Sendable {
    // Sound: `events` is only touched while `lock` is held.
    private let lock = NSLock()
    private var events: [LoggingMiddleware.Event] = []
    func append(_ event: LoggingMiddleware.Event) {
        lock.lock()
        events.append(event)
        lock.unlock()
    }
    var all: [LoggingMiddleware.Event] {
        lock.lock()
        defer { lock.unlock() }
        return events
    }
}
