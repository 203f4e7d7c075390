import Courier
import CourierConformance
@testable import CourierNIO
import Foundation
import Testing

/// `NIOExecutor` held to every case of the transport conformance suite, unchanged, against the
/// loopback servers `scripts/test` starts.
@Suite("Conformance: NIOExecutor", .serialized, .timeLimit(.minutes(3)))
struct ConformanceTests {
    /// A transport that trusts the test authority `scripts/test` made, beside the system's roots,
    /// offering HTTP/2 by ALPN or HTTP/1.1 only; it lives as long as the test process.
    static func httpsTransport(allowsHTTP2: Bool) -> NIOTransport? {
        guard let directory = ProcessInfo.processInfo.environment["COURIER_TLS_DIR"],
            let authority = try? TLSOptions.Certificate(contentsOf: URL(fileURLWithPath: directory + "/ca.pem"))
        else { return nil }
        return try? NIOTransport(
            configuration: NIOTransport.Configuration(tls: TLSOptions(trust: .systemAnd([authority])), allowsHTTP2: allowsHTTP2))
    }

    static let http2Transport = httpsTransport(allowsHTTP2: true)
    static let http1Transport = httpsTransport(allowsHTTP2: false)

    private static func runOverHTTPS(_ check: ConformanceCase, transport: NIOTransport?) async throws {
        let transport = try #require(transport, "COURIER_TLS_DIR is not set or its ca.pem is unreadable: run scripts/test")
        let base = NIOExecutor(transport: transport)
        try await check.run(servers: try ConformanceServers.httpsFromEnvironment()) { base }
    }

    /// Over HTTPS with HTTP/2: both httpbin origins behind TLS (hypercorn offers HTTP/2); the
    /// hostile and streaming servers stay plain HTTP/1.1: their cases are about HTTP/1.1 framing.
    @Test(arguments: ConformanceSuite.cases)
    func conformsOverHTTP2(_ check: ConformanceCase) async throws {
        try await Self.runOverHTTPS(check, transport: Self.http2Transport)
    }

    /// And over HTTPS with HTTP/1.1.
    @Test(arguments: ConformanceSuite.cases)
    func conformsOverHTTPS1(_ check: ConformanceCase) async throws {
        try await Self.runOverHTTPS(check, transport: Self.http1Transport)
    }

    /// The HTTP/2 mode speaks HTTP/2 indeed (agreed by ALPN, one connection shared by
    /// concurrent hops), and the other HTTP/1.1.
    @Test func theHTTP2ModeSpeaksHTTP2() async throws {
        let servers = try ConformanceServers.httpsFromEnvironment()
        let transport = try #require(Self.httpsTransport(allowsHTTP2: true))
        let origin = try #require(try? RequestTarget(url: servers.httpbin + "/get").origin)
        let executor = NIOExecutor(transport: transport)
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<8 { group.addTask { try await executor.send(.get |> url(servers.httpbin + "/delay/0")).status } }
            for try await status in group { #expect(status == 200) }
        }
        #expect(transport.connectionCounts(origin) == .init(open: 1, http2: 1))
        await transport.shutdown()
        let http1 = try #require(Self.httpsTransport(allowsHTTP2: false))
        let status = try await NIOExecutor(transport: http1).send(.get |> url(servers.httpbin + "/get")).status
        #expect(status == 200)
        #expect(http1.connectionCounts(origin).http2 == 0)
        await http1.shutdown()
    }

    @Test(arguments: ConformanceSuite.cases)
    func conforms(_ check: ConformanceCase) async throws {
        let base = makeExecutor()
        try await check.run(servers: try servers()) { base }
    }
}
