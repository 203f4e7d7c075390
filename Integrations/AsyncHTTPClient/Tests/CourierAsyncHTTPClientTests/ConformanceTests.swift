import AsyncHTTPClient
import Courier
import CourierAsyncHTTPClient
import CourierConformance
import NIOPosix
import Testing

/// `AsyncHTTPClientExecutor` held to every case of the transport conformance suite, unchanged,
/// against the loopback servers `scripts/test` starts. Serialized, as for URLSession: several
/// cases move tens of megabytes or time their answers.
@Suite("Conformance: AsyncHTTPClientExecutor", .serialized, .timeLimit(.minutes(3)))
struct ConformanceTests {
    @Test(arguments: ConformanceSuite.cases)
    func conforms(_ check: ConformanceCase) async throws {
        let base = try makeExecutor()
        try await check.run(servers: try servers()) { options in
            var executor = base
            executor.redirects = options.redirects
            executor.maximumResponseSize = options.maximumResponseSize
            executor.hopMiddleware = options.hopMiddleware
            return executor
        }
    }
}
