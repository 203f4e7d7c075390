import CourierAsyncHTTPClient
import CourierNIO
import CourierTesting
import CourierCore
import Foundation
import InMemoryLogging
import InMemoryTracing
import Logging
import MetricsTestKit
import NotesAPI
import OpenAPIRuntime
import Testing

/// The example service as its team would test it: offline against Courier's in-memory executor
/// (no server, a scripted failure), and live over AsyncHTTPClient and CourierNIO against the httpbin that
/// Courier's scripts/test starts.
@Suite("Notes: a generated client over Courier")
struct NotesServiceTests {
    static func logger() -> (Logger, InMemoryLogHandler) {
        let handler = InMemoryLogHandler()
        var logger = Logger(label: "notes.test") { _ in handler }
        logger.logLevel = .trace
        return (logger, handler)
    }

    static func logged(_ handler: InMemoryLogHandler) -> String {
        handler.entries.map { "\($0.message) \($0.metadata)" }.joined(separator: "\n")
    }

    /// Counts the tokens handed out: `token-1`, `token-2`, ….
    actor Tokens {
        private(set) var issued = 0
        func next(_ rejected: String?) -> String {
            issued += 1
            return "token-\(issued)"
        }
    }

    @Test func offlineARetriedPostAndARefreshedTokenAreEachOneCall() async throws {
        let receipt = Components.Schemas.Receipt(
            method: "POST", headers: .init(additionalProperties: [:]), json: .init(title: "Groceries"))
        let identity = Components.Schemas.Identity(authenticated: true, token: "token-2")
        let server = InMemoryExecutor(routes: [
            // The first attempt meets a 503; the retry, with the same Idempotency-Key, succeeds.
            .init(.post, "/anything/notes", script: [.status(503)], then: .json(receipt)),
            // The first token is rejected; the refreshed one is accepted.
            .init(.get, "/bearer") { request, _ in
                request.headers[.authorization] == "Bearer token-2" ? .json(identity) : .status(401)
            },
        ])
        let (logger, handler) = Self.logger()
        let metrics = TestMetrics()
        let tracer = InMemoryTracer()
        let tokens = Tokens()
        let service = NotesService(
            serverURL: try #require(URL(string: "https://notes.test")), executor: server,
            retry: RetryPolicy(maxAttempts: 2, baseDelay: .zero), logger: logger, metrics: metrics, tracer: tracer,
            token: { await tokens.next($0) })

        let note = try await service.client.createNote(headers: .init(idempotencyKey: "k-1"), body: .json(.init(title: "Groceries")))
        #expect(try note.ok.body.json.json?.title == "Groceries")
        let posts = server.requests.filter { $0.method == .post }
        #expect(posts.count == 2)
        #expect(posts.allSatisfy { $0.headers["Idempotency-Key"] == "k-1" && $0.body == posts[0].body })
        #expect(posts.allSatisfy { $0.operationID == "createNote" })

        let me = try await service.client.whoAmI().ok.body.json
        #expect(me.authenticated)
        #expect(await tokens.issued == 2)

        // Every attempt is logged with its operation; no token is.
        let log = Self.logged(handler)
        #expect(log.contains("courier.operation_id: createNote") || log.contains("\"courier.operation_id\": createNote"))
        #expect(handler.entries.contains { $0.metadata["http.request.resend_count"] == "1" })
        #expect(!log.contains("token-1") && !log.contains("token-2"))
        // Metrics count each call once, by method and status, never a path.
        let timers = metrics.timers.filter { $0.label == "http.client.request.duration" }
        #expect(timers.contains { $0.dimensions.contains { $0 == ("http.request.method", "POST") } })
        #expect(!timers.contains { $0.dimensions.contains { $0.1.contains("notes") && $0.0 != "server.address" } })
        // One span per call, named by its operation, each request carrying its trace context.
        #expect(tracer.finishedSpans.map(\.operationName) == ["createNote", "whoAmI"])
        #expect(server.requests.allSatisfy { $0.headers[HeaderName(rawValue: InMemoryTracer.traceIDKey)] != nil })
    }

    /// The executors a service picks from: Courier on AsyncHTTPClient, and Courier's own wire.
    static let liveExecutors: [String: any Executor] = [
        "AsyncHTTPClient": AsyncHTTPClientExecutor.shared, "CourierNIO": NIOExecutor.shared,
    ]

    @Test(arguments: ["AsyncHTTPClient", "CourierNIO"])
    func liveAgainstHttpbin(over transport: String) async throws {
        let executor = try #require(Self.liveExecutors[transport])
        let base = try #require(
            ProcessInfo.processInfo.environment["COURIER_HTTPBIN_URL"].flatMap(URL.init(string:)),
            "COURIER_HTTPBIN_URL names a running httpbin (Courier's scripts/test starts one)")
        let (logger, handler) = Self.logger()
        let tokens = Tokens()
        let service = NotesService(
            serverURL: base, executor: executor,
            retry: RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(10)), logger: logger, metrics: TestMetrics(),
            token: { await tokens.next($0) })

        let me = try await service.client.whoAmI().ok.body.json
        #expect(me.authenticated && me.token == "token-1")

        let receipt = try await service.client.createNote(
            headers: .init(idempotencyKey: "k-2"), body: .json(.init(title: "Groceries", text: "milk"))
        ).ok.body.json
        #expect(receipt.method == "POST")
        #expect(receipt.json == .init(title: "Groceries", text: "milk"))
        #expect(receipt.headers.additionalProperties["Idempotency-Key"] == "k-2")

        guard case .default(let status, _) = try await service.client.health(path: .init(code: 503)) else {
            Issue.record("a 503 did not reach the documented default response")
            return
        }
        #expect(status == 503)
        let attempts = handler.entries.filter { $0.metadata["courier.event"] == "response" && $0.metadata["courier.operation_id"] == "health" }
        #expect(attempts.count == 3)
        #expect(!Self.logged(handler).contains("token-1"))
    }
}
