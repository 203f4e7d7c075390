import Courier
import CourierLogging
import Foundation
import InMemoryLogging
import Logging
import Testing

/// LoggingMiddleware writing to a swift-log Logger: levels, OpenTelemetry metadata, and no secret
/// in any message or metadata value.
@Suite("LoggingMiddleware → swift-log")
struct LoggerSinkTests {
    static func logger(_ level: Logger.Level = .trace) -> (Logger, InMemoryLogHandler) {
        let handler = InMemoryLogHandler()
        var logger = Logger(label: "courier.test") { _ in handler }
        logger.logLevel = level
        return (logger, handler)
    }

    static let request = make(.get)
    static func make(_ method: Request) -> Request {
        method |> baseURL("https://user:pa55@api.test:8443/v1") |> path("items")
        |> query("token", "q-s3cr3t") |> query("page", 2) |> bearer("b3arer") |> header("X-API-Key", "k3y")
    }

    static func everything(_ handler: InMemoryLogHandler) -> String {
        handler.entries.map { "\($0.message) \($0.metadata)" }.joined(separator: "\n")
    }

    @Test func trafficIsLoggedAtTraceAndDebugWithOpenTelemetryKeys() async throws {
        let (logger, handler) = Self.logger()
        let server = InMemoryExecutor.scripted([], then: .json(["id": 1]))
        _ = try await server.with(LoggingMiddleware(logger: logger)).send(Self.request)
        let entries = handler.entries
        try #require(entries.count == 2)
        #expect(entries[0].level == .trace && entries[1].level == .debug)
        #expect(entries[0].metadata["courier.event"] == "request")
        let response = entries[1].metadata
        #expect(response["courier.event"] == "response")
        #expect(response["http.request.method"] == "GET")
        #expect(response["http.response.status_code"] == "200")
        #expect(response["server.address"] == "api.test")
        #expect(response["server.port"] == "8443")
        #expect(response["url.full"] == "https://api.test:8443/v1/items?token=<redacted>&page=2")
        #expect(response["http.response.body.size"] != nil)
        #expect(response["http.client.request.duration"].flatMap { Double("\($0)") } != nil)
        #expect(response["http.request.resend_count"] == nil)
    }

    @Test func aBreakerOpeningIsLoggedAtInfoWithTheOriginAndNoSecret() async throws {
        let (logger, handler) = Self.logger()
        let breaker = CircuitBreaker(policy: .init(failureRatio: 1, minimumCalls: 1))
        let server = InMemoryExecutor.scripted([], then: .status(503))
        _ = try await server.with(breaker).with(LoggingMiddleware(logger: logger)).send(Self.request)
        let decided = try #require(handler.entries.first { $0.metadata["courier.event"] == "resilience" })
        #expect(decided.level == .info)
        #expect(decided.metadata["courier.resilience.event"] == "circuit_opened")
        #expect(decided.metadata["courier.resilience.origin"] == "https://api.test:8443")
        for secret in ["q-s3cr3t", "b3arer", "k3y", "pa55"] { #expect(!Self.everything(handler).contains(secret)) }
    }

    @Test func aResponseThatWentThroughTheCacheSaysHow() async throws {
        let (logger, handler) = Self.logger()
        let server = InMemoryExecutor.scripted([], then: .status(200, headers: ["Cache-Control": "max-age=60"], body: Data("c".utf8)))
        let executor = server.eachHop(HTTPCache()).with(LoggingMiddleware(logger: logger))
        _ = try await executor.send(.get |> url("https://api.test/cached"))
        _ = try await executor.send(.get |> url("https://api.test/cached"))
        let responses = handler.entries.filter { $0.metadata["courier.event"] == "response" }
        #expect(responses.map { $0.metadata["courier.cache.status"] } == ["miss", "hit"])
    }

    @Test func noSecretReachesTheLogs() async throws {
        let (logger, handler) = Self.logger()
        let server = InMemoryExecutor.scripted([], then: .json(["password": "hunter2", "id": "1"]))
        _ = try await server.with(LoggingMiddleware(logger: logger, bodies: .on(maxBytes: 1024))).send(
            Self.make(.post) |> json(["client_secret": "cl1ent"]))
        let logged = Self.everything(handler)
        for secret in ["q-s3cr3t", "b3arer", "k3y", "pa55", "hunter2", "cl1ent"] {
            #expect(!logged.contains(secret), "\(secret) was logged")
        }
        #expect(logged.contains("courier.response.body"))
    }

    @Test func retriesCarryTheirResendCount() async throws {
        let (logger, handler) = Self.logger(.debug)
        let server = InMemoryExecutor.scripted([.status(503)], then: .text("ok"))
        let retry = RetryMiddleware(policy: RetryPolicy(maxAttempts: 2, baseDelay: .milliseconds(1)))
        _ = try await server.with(retry, LoggingMiddleware(logger: logger)).send(Self.request)
        let counts = handler.entries.map { $0.metadata["http.request.resend_count"].map { "\($0)" } }
        #expect(counts == [nil, "1"])
        // `.debug`: the requests (at `.trace`) were not logged.
        #expect(handler.entries.allSatisfy { $0.metadata["courier.event"] == "response" })
    }

    @Test func failuresCarryTheirErrorType() async throws {
        let (logger, handler) = Self.logger(.debug)
        let lost = TransportFailure(.connectionLost, message: "reset")
        let server = InMemoryExecutor.scripted([], then: .failure(CourierError(.transport(lost))))
        await #expect(throws: CourierError.self) { _ = try await server.with(LoggingMiddleware(logger: logger)).send(Self.request) }
        let failure = try #require(handler.entries.last)
        #expect(failure.level == .debug)
        #expect(failure.metadata["courier.event"] == "failure")
        #expect(failure.metadata["error.type"] == "connectionLost")
    }

    @Test func aStreamLogsItsEndWithTheBytesTheReaderTook() async throws {
        let (logger, handler) = Self.logger(.debug)
        let server = InMemoryExecutor.scripted([], then: .stream([Data("hello ".utf8), Data("world".utf8)]))
        let response = try await server.with(LoggingMiddleware(logger: logger)).stream(Self.request)
        _ = try await response.body.collect(upTo: 1 << 20)
        let ended = try #require(handler.entries.last)
        #expect(ended.metadata["courier.event"] == "stream_ended")
        #expect(ended.metadata["http.response.body.size"] == "11")
        #expect(ended.metadata["courier.stream.ending"] == "complete")
    }

    /// A body the reader drops unread is logged at the stream level as left unread, with no
    /// error type: not as a cancelled request.
    @Test func aBodyLeftUnreadIsNotAFailure() async throws {
        let (logger, handler) = Self.logger(.debug)
        let server = InMemoryExecutor.scripted([], then: .stream([Data("unread".utf8)], status: 404))
        do { _ = try await server.with(LoggingMiddleware(logger: logger)).stream(Self.request) }
        let ended = try #require(handler.entries.last)
        #expect(ended.level == .debug)
        #expect(ended.metadata["courier.stream.ending"] == "abandoned")
        #expect(ended.metadata["error.type"] == nil)
        #expect(ended.message.description.hasSuffix("body not read)"))
    }
}
