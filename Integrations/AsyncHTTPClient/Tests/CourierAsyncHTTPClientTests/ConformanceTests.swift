import AsyncHTTPClient
import Courier
import CourierAsyncHTTPClient
import CourierConformance
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing

/// `AsyncHTTPClientExecutor` held to every case of the transport conformance suite, unchanged,
/// against the loopback servers `scripts/test` starts. Serialized, as for URLSession: several
/// cases move tens of megabytes or time their answers.
@Suite("Conformance: AsyncHTTPClientExecutor", .serialized, .timeLimit(.minutes(3)))
struct ConformanceTests {
    /// A client that trusts the test authority `scripts/test` made, beside the system's roots,
    /// configured the way the executor asks, speaking `version`; it lives as long as the test
    /// process.
    static func httpsClient(_ version: HTTPClient.Configuration.HTTPVersion) -> HTTPClient? {
        guard let directory = ProcessInfo.processInfo.environment["COURIER_TLS_DIR"],
            let authority = try? TLSOptions.Certificate(contentsOf: URL(fileURLWithPath: directory + "/ca.pem")),
            var configuration = try? AsyncHTTPClientExecutor.clientConfiguration(tls: TLSOptions(trust: .systemAnd([authority])))
        else { return nil }
        configuration.httpVersion = version
        return HTTPClient(eventLoopGroup: .singletonMultiThreadedEventLoopGroup, configuration: configuration)
    }

    /// HTTP/2 where the server offers it (ALPN): hypercorn does.
    static let http2Client = httpsClient(.automatic)
    static let http1Client = httpsClient(.http1Only)

    private static func runOverHTTPS(_ check: ConformanceCase, client: HTTPClient?) async throws {
        let client = try #require(client, "COURIER_TLS_DIR is not set or its ca.pem is unreadable: run scripts/test")
        let base = try AsyncHTTPClientExecutor(client: client)
        try await check.run(servers: try ConformanceServers.httpsFromEnvironment()) { base }
    }

    /// The same cases over HTTPS with HTTP/2: both httpbin origins behind TLS (the hostile and
    /// streaming servers stay plain HTTP/1.1: their cases are about HTTP/1.1 framing).
    @Test(arguments: ConformanceSuite.cases)
    func conformsOverHTTP2(_ check: ConformanceCase) async throws {
        try await Self.runOverHTTPS(check, client: Self.http2Client)
    }

    /// And over HTTPS with HTTP/1.1.
    @Test(arguments: ConformanceSuite.cases)
    func conformsOverHTTPS1(_ check: ConformanceCase) async throws {
        try await Self.runOverHTTPS(check, client: Self.http1Client)
    }

    /// The HTTPS mode is HTTP/2 indeed: the server and the client agree on it by ALPN.
    @Test func theHTTP2ModeSpeaksHTTP2() async throws {
        let client = try #require(Self.http2Client)
        let servers = try ConformanceServers.httpsFromEnvironment()
        let response = try await client.execute(HTTPClientRequest(url: servers.httpbin + "/get"), deadline: .now() + .seconds(30))
        #expect(response.version == .http2)
        let http1 = try #require(Self.http1Client)
        let other = try await http1.execute(HTTPClientRequest(url: servers.httpbin + "/get"), deadline: .now() + .seconds(30))
        #expect(other.version == .http1_1)
    }

    @Test(arguments: ConformanceSuite.cases)
    func conforms(_ check: ConformanceCase) async throws {
        let base = try makeExecutor()
        let servers = try servers()
        try await check.run(servers: servers) { base }
    }
}
