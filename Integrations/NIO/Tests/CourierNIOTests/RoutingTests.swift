import Courier
import CourierConformance
@testable import CourierNIO
import Foundation
import NIOConcurrencyHelpers
import Testing

/// Origins reached another way than TCP to their host in HTTP/1.1, against real peers that
/// `scripts/test` starts: httpbin on a Unix domain socket (gunicorn), httpbin in h2c with prior
/// knowledge (hypercorn), and a resolver of the caller's.
@Suite("NIOExecutor: routes and resolvers", .serialized, .timeLimit(.minutes(2)))
struct RoutingTests {
    struct Echo: Decodable { var headers: [String: String] }

    static func environment(_ name: String) throws -> String {
        try #require(ProcessInfo.processInfo.environment[name], "run the tests with scripts/test, which starts the servers")
    }

    /// Records the hop's timings.
    final class Timed: HopTimingsObserver, Sendable {
        let last = NIOLockedBox<HopTimings?>(nil)
        func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
            let response = try await next(request)
            last.set(response.timings)
            return response
        }
    }

    @Test func anOriginIsReachedOverAUnixDomainSocket() async throws {
        let socket = try Self.environment("COURIER_HTTPBIN_UNIX_SOCKET")
        var configuration = NIOTransport.Configuration()
        configuration.routes = [try .unixSocket(socket, for: "http://docker")]
        let transport = try NIOTransport(configuration: configuration)
        defer { Task { await transport.shutdown() } }
        let timed = Timed()
        let executor = NIOExecutor(transport: transport).eachHop(timed)
        for _ in 0..<3 {
            let echo = try await executor.send(.get |> url("http://docker/headers") |> decode(Echo.self))
            #expect(echo.headers["Host"] == "docker")
        }
        // One connection, kept alive; no name looked up.
        #expect(transport.connectionCounts(Origin(isSecure: false, host: "docker", port: 80)).open == 1)
        #expect(timed.last.get()?.dns == nil)
        // Another origin is not routed.
        let direct = try await NIOExecutor(transport: transport).send(.get |> url(try servers().httpbin + "/get"))
        #expect(direct.status == 200)
    }

    @Test func anHTTPOriginSpeaksHTTP2WithPriorKnowledge() async throws {
        let address = try Self.environment("COURIER_HTTPBIN_H2C_URL")
        var configuration = NIOTransport.Configuration()
        configuration.routes = [try .http2PriorKnowledge(for: address)]
        let transport = try NIOTransport(configuration: configuration)
        defer { Task { await transport.shutdown() } }
        let timed = Timed()
        let executor = NIOExecutor(transport: transport).eachHop(timed)
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<8 { group.addTask { try await executor.send(.get |> url(address + "/get")).status } }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 200, count: 8))
        #expect(timed.last.get()?.negotiatedProtocol == "h2")
        let origin = try RequestTarget(url: address + "/").origin
        #expect(transport.connectionCounts(origin) == .init(open: 1, http2: 1), "the hops shared one h2c connection")
        // Bodies both ways.
        struct Posted: Decodable { var data: String }
        let posted = try await executor.send(.post |> url(address + "/post") |> body(Data("over h2c".utf8)) |> decode(Posted.self))
        #expect(posted.data == "over h2c")
    }

    @Test func aFixedTableAnswersItsNamesAndTheLookupIsTimed() async throws {
        let httpbin = try servers().httpbin
        let port = try #require(URL(string: httpbin)?.port)
        var configuration = NIOTransport.Configuration()
        configuration.resolver = .fixed(["Payments.Courier.Test": ["127.0.0.1"]], otherwise: nil)
        let transport = try NIOTransport(configuration: configuration)
        defer { Task { await transport.shutdown() } }
        let timed = Timed()
        let executor = NIOExecutor(transport: transport).eachHop(timed)
        let echo = try await executor.send(.get |> url("http://payments.courier.test:\(port)/headers") |> decode(Echo.self))
        #expect(echo.headers["Host"] == "payments.courier.test:\(port)")
        #expect(timed.last.get()?.dns != nil)
        #expect(timed.last.get()?.remoteAddress == "127.0.0.1:\(port)")
        // A name the table does not hold, and no other resolver: a DNS failure.
        let error = await #expect(throws: CourierError.self) { _ = try await executor.send(.get |> url("http://other.courier.test:\(port)/get")) }
        guard case .transport(let failure)? = error?.cause else { return }
        #expect(failure.kind == .dnsFailure)
    }

    @Test func aResolverOfTheCallersAnswersEveryName() async throws {
        let httpbin = try servers().httpbin
        let port = try #require(URL(string: httpbin)?.port)
        let asked = NIOLockedBox<[String]>([])
        var configuration = NIOTransport.Configuration()
        configuration.resolver = .custom { host in
            asked.set(asked.get() + [host])
            switch host {
            case "registry.courier.test": return ["::1", "127.0.0.1"]
            case "garbage.courier.test": return ["not-an-address"]
            default: throw LookupRefused(secret: "token-in-a-message")
            }
        }
        let transport = try NIOTransport(configuration: configuration)
        defer { Task { await transport.shutdown() } }
        let executor = NIOExecutor(transport: transport)
        #expect(try await executor.send(.get |> url("http://registry.courier.test:\(port)/get")).status == 200)
        for host in ["garbage.courier.test", "unknown.courier.test"] {
            let error = await #expect(throws: CourierError.self) { _ = try await executor.send(.get |> url("http://\(host):\(port)/get")) }
            guard case .transport(let failure)? = error?.cause else { continue }
            #expect(failure.kind == .dnsFailure, "\(host)")
            #expect(!"\(String(describing: error))".contains("token-in-a-message"))
        }
        #expect(asked.get().contains("registry.courier.test"))
    }

    struct LookupRefused: Error { var secret: String }

    @Test(arguments: [
        ("http://docker/v1/info", "/s.sock", "has a path or query"),
        ("ftp://docker", "/s.sock", "is not http://host"),
        ("http://docker", "relative.sock", "is not absolute"),
        ("http://docker", "/" + String(repeating: "s", count: 200), "a Unix domain socket's is at most"),
        ("http://docker", "/a\u{0}b", "NUL"),
    ])
    func aRouteThatCannotBeUsedIsRefusedSayingWhy(origin: String, path: String, words: String) {
        do {
            _ = try NIOTransport.Route.unixSocket(path, for: origin)
            Issue.record("\(origin) via \(path) was accepted")
        } catch {
            #expect(error.reason.contains(words), "\(error.reason)")
        }
    }

    @Test func h2cIsForHTTPOriginsOnly() throws {
        #expect(throws: NIOTransport.Route.Invalid.self) { try NIOTransport.Route.http2PriorKnowledge(for: "https://api.test") }
        let route = try NIOTransport.Route.http2PriorKnowledge(for: "http://Sidecar.Test:50051/")
        #expect(route.origin == "http://sidecar.test:50051")
        #expect("\(route)" == "http://sidecar.test:50051 in h2c")
    }
}

/// A value behind a lock, for the tests' observers.
final class NIOLockedBox<Value: Sendable>: Sendable {
    private let lock: NIOConcurrencyHelpers.NIOLockedValueBox<Value>
    init(_ value: Value) { lock = NIOConcurrencyHelpers.NIOLockedValueBox(value) }
    func get() -> Value { lock.withLockedValue { $0 } }
    func set(_ value: Value) { lock.withLockedValue { $0 = value } }
}
