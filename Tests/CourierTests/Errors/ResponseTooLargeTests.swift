import Courier
import Foundation
import Testing

/// A body stopped at the size limit keeps the answer's head on the error: a customer that
/// answered 200 with a huge body is told apart from a failed delivery.
@Suite("responseTooLarge keeps the status and fields, not the body")
struct ResponseTooLargeTests {
    private static let huge = Data(repeating: UInt8(ascii: "x"), count: 4096)

    @Test func aSuccessWithAHugeBodyKeepsItsStatusAndFields() async throws {
        let api = InMemoryExecutor(
            routes: [.init(.post, "/hooks", .status(200, headers: ["X-Delivery": "d-17"], body: Self.huge))], maximumResponseSize: 1024)
        let error = try #require(await #expect(throws: CourierError.self) { try await api.send(.post |> url("https://customer.test/hooks")) })
        guard case .responseTooLarge(1024) = error.cause else {
            Issue.record("expected responseTooLarge, got \(error)")
            return
        }
        #expect(error.response?.status == 200)
        #expect(error.response?.headers["X-Delivery"] == "d-17")
        #expect(error.response?.body.isEmpty == true)
        #expect(error.summary.contains("the server answered 200"))
        #expect(!error.description.contains("xxxx"))
    }

    @Test func aStreamedBodyStoppedAtTheLimitKeepsTheHeadToo() async throws {
        let api = InMemoryExecutor(
            routes: [.init(.get, "/export", .stream([Self.huge, Self.huge], status: 206))], maximumResponseSize: 5000)
        let streamed = try await api.stream(.get |> url("https://customer.test/export"))
        let error = try #require(await #expect(throws: CourierError.self) { _ = try await streamed.body.collect(upTo: 1 << 20) })
        #expect(error.response?.status == 206)
    }
}
