import AsyncHTTPClient
import Courier
import CourierAsyncHTTPClient
import CourierConformance
import CourierOpenAPI
import Foundation
import OpenAPIRuntime
import Testing

/// The generated httpbin client of Integrations/OpenAPI (its files linked in
/// GeneratedHttpbinClient/) over this transport, with middleware, against httpbin.
@Suite("OpenAPI: a generated client over AsyncHTTPClientExecutor")
struct OpenAPIOverAHCTests {
    @Test func aGeneratedClientRunsOverAsyncHTTPClient() async throws {
        let server = try #require(URL(string: try servers().httpbin))
        let executor = try makeExecutor().with(DefaultHeadersMiddleware(["Authorization": "Bearer from-middleware"]), RetryMiddleware(policy: RetryPolicy(maxAttempts: 2, baseDelay: .milliseconds(10))))
        let client = Client(serverURL: server, transport: CourierTransport(executor))
        let echo = try await client.postAnything(path: .init(item: "a b"), query: .init(tag: "x+y"), body: .json(.init(title: "over NIO"))).ok.body.json
        #expect(echo.method == "POST")
        #expect(echo.json?.title == "over NIO")
        #expect(echo.headers.additionalProperties["Authorization"] == "Bearer from-middleware")
        #expect(echo.url.hasSuffix("/anything/a%20b?tag=x%2By"))
        let body = try await client.getBytes(path: .init(n: 100_000)).ok.body.binary
        var total = 0
        for try await chunk in body { total += chunk.count }
        #expect(total == 100_000)
        guard case .default(let status, _) = try await client.getStatus(path: .init(code: 503)) else {
            Issue.record("503 did not reach the default response")
            return
        }
        #expect(status == 503)
    }
}
