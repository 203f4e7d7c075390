import Courier
import CourierConformance
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `URLSessionExecutor` (an exchange over `URLSessionTransport`) held to every case of the transport conformance suite, against the
/// loopback servers `scripts/test` starts. Serialized: several cases move tens of megabytes or
/// time their answers, which on two cores would disturb one another.
@Suite("Conformance: URLSessionExecutor", .serialized, .timeLimit(.minutes(3)))
struct URLSessionConformanceTests {
    @Test(arguments: ConformanceSuite.cases)
    func conforms(_ check: ConformanceCase) async throws {
        try await check.run(servers: try ConformanceServers.fromEnvironment()) { URLSessionExecutor(configuration: .ephemeral) }
    }
}
