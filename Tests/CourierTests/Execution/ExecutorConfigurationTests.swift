import Courier
import Foundation
import Testing

/// Every executor is configured the same way, through the exchange it holds: middleware per call
/// and per hop, the redirect policy and the size limit, on whatever type a caller holds.
@Suite("Executors: one way to configure and run a call")
struct ExecutorConfigurationTests {
    /// Appends its name to the request's `X-Order` field on the way out.
    struct Mark: Middleware {
        let name: String
        func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
            let order = request.headers["X-Order"].map { $0 + "," + name } ?? name
            return try await next(request |> header("X-Order", order))
        }
    }

    static let start = Request.get |> url("https://api.test/a")

    static func chain() -> InMemoryExecutor {
        InMemoryExecutor(routes: [
            .init(.get, "/a", .status(302, headers: ["Location": "/b"])),
            .init(.get, "/b") { request, _ in .text(request.headers["X-Order"] ?? "") },
        ])
    }

    @Test func withAddsOutsideWhatIsThereAndKeepsTheExecutorsType() async throws {
        let stubs = Self.chain()
        // The type is the executor's own: its record is still there to read.
        let wrapped: InMemoryExecutor = stubs.with(Mark(name: "inner")).with(Mark(name: "outer"))
        let response = try await wrapped.send(Self.start)
        #expect(String(decoding: response.body, as: UTF8.self) == "outer,inner")
        // Copies share the stubs and the record.
        #expect(stubs.requests.map(\.path) == ["/a", "/b"])
    }

    @Test func hopMiddlewareSeesEveryHopAndCallMiddlewareTheCallOnce() async throws {
        let stubs = Self.chain().with(Mark(name: "call")).eachHop(Mark(name: "hop"))
        let response = try await stubs.send(Self.start)
        // Each hop is the redirect policy's request from the call's (marked once by the per-call
        // middleware), marked again by the hop middleware as it goes out.
        #expect(String(decoding: response.body, as: UTF8.self) == "call,hop")
        #expect(stubs.requests.map { $0.headers["X-Order"] } == ["call,hop", "call,hop"])
    }

    @Test func theRedirectPolicyAndSizeLimitAreSetOnAnyExecutorHeld() async throws {
        var held: any Executor = Self.chain()
        held.redirects = .refuse
        let refused = try await held.send(Self.start)
        #expect(refused.status == 302)

        held.redirects = .follow
        held.maximumResponseSize = 2
        let error = await #expect(throws: CourierError.self) { _ = try await held.send(Self.start |> header("X-Order", "long")) }
        guard case .responseTooLarge(2)? = error?.cause else {
            Issue.record("\(String(describing: error))")
            return
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func anInMemoryCallTimesOutOnTheExecutorsClock() async throws {
        let clock = ManualClock()
        let slow = InMemoryExecutor(clock: clock) { _ in .text("late").delayed(by: .seconds(30)) }
        let call = Task { try await slow.send(Self.start |> timeout(5)) }
        // The stub's delay and the request's idle timer both wait on the test's clock: both are
        // asleep before it moves.
        try await clock.waitForSleepers(2)
        clock.advance(by: .seconds(6))
        let error = await #expect(throws: CourierError.self) { _ = try await call.value }
        guard case .timedOut? = error?.cause else {
            Issue.record("\(String(describing: error))")
            return
        }
    }
}
