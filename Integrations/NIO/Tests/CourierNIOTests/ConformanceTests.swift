import Courier
import CourierConformance
import CourierNIO
import Foundation
import Testing

/// `NIOExecutor` held to every case of the transport conformance suite, unchanged, against the
/// loopback servers `scripts/test` starts.
@Suite("Conformance: NIOExecutor", .serialized, .timeLimit(.minutes(3)))
struct ConformanceTests {
    /// A transport that trusts the test authority `scripts/test` made, beside the system's roots;
    /// it lives as long as the test process.
    static let httpsTransport: NIOTransport? = {
        guard let directory = ProcessInfo.processInfo.environment["COURIER_TLS_DIR"],
            let authority = try? TLSOptions.Certificate(contentsOf: URL(fileURLWithPath: directory + "/ca.pem"))
        else { return nil }
        return try? NIOTransport(configuration: NIOTransport.Configuration(tls: TLSOptions(trust: .systemAnd([authority]))))
    }()

    @Test(arguments: ConformanceSuite.cases)
    func conforms(_ check: ConformanceCase) async throws {
        let base = makeExecutor()
        try await check.run(servers: try servers()) { base }
    }

    /// The same cases over HTTPS with HTTP/1.1: both httpbin origins behind TLS (the hostile and
    /// streaming servers stay plain HTTP/1.1: their cases are about HTTP/1.1 framing).
    @Test(arguments: ConformanceSuite.cases)
    func conformsOverHTTPS1(_ check: ConformanceCase) async throws {
        let transport = try #require(Self.httpsTransport, "COURIER_TLS_DIR is not set or its ca.pem is unreadable: run scripts/test")
        let base = NIOExecutor(transport: transport)
        try await check.run(servers: try ConformanceServers.httpsFromEnvironment()) { base }
    }
}
