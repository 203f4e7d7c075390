import CourierCore
import CourierResilience
import CourierTesting
import Foundation

extension ConformanceSuite {
    /// What resilience middleware needs of a transport: a cancelled attempt (a hedge that lost)
    /// closes its connection, so the server stops working on it; a call a breaker refuses never
    /// reaches the server.
    static let resilience: [ConformanceCase] = [
        ConformanceCase("resilience: a losing hedge is cancelled and the server sees its connection close") { context in
            let origin = try await FleetOrigin(context, mode: "first-hangs")
            // The first attempt is held until the client gives up on it; the hedge answers.
            let executor = context.executor().with(HedgingMiddleware(delay: .fixed(.milliseconds(20))))
            let status = try await executor.send(context.hostile() |> path("fleet") |> query("key", origin.key)).status
            try context.expect(status == 200, "the hedge's answer was \(status)")
            // The server notices the close as soon as it arrives; it answers a held request it
            // was not told about after 30 s, which ends the wait too.
            var count = try await origin.count()
            while count.disconnects + count.heldAnswered == 0 {
                try await Task.sleep(for: .milliseconds(20))
                count = try await origin.count()
            }
            try context.expect(count.disconnects == 1, "the losing attempt was answered instead of closed: \(count)")
            try context.expect(count.requests == 2, "\(count.requests) requests for one hedged call")
        },
        ConformanceCase("resilience: a call the circuit breaker refuses sends no byte") { context in
            let origin = try await FleetOrigin(context, mode: "503")
            let breaker = CircuitBreaker(policy: .init(failureRatio: 1, minimumCalls: 2, breakDuration: .seconds(60)))
            let executor = context.executor().with(breaker)
            let request = context.hostile() |> path("fleet") |> query("key", origin.key)
            for _ in 0..<2 { _ = try await executor.send(request) }
            let error = try await context.error { _ = try await executor.send(request) }
            guard case .circuitOpen = error.cause else { throw context.failure("expected circuitOpen, got \(error)") }
            let count = try await origin.count()
            try context.expect(count.requests == 2, "the refused call reached the server: \(count.requests) requests")
        },
    ]
}

/// An origin of the hostile server's `/fleet` with a key of its own, in a mode.
private struct FleetOrigin {
    struct Count: Decodable, CustomStringConvertible {
        var requests: Int
        var disconnects: Int
        var heldAnswered: Int

        enum CodingKeys: String, CodingKey {
            case requests, disconnects
            case heldAnswered = "held_answered"
        }

        var description: String { "\(requests) requests, \(disconnects) disconnects, \(heldAnswered) held answered" }
    }

    let key = UUID().uuidString
    let context: ConformanceContext
    let control: any Executor

    init(_ context: ConformanceContext, mode: String) async throws {
        self.context = context
        control = context.executor()
        let status = try await control.send(context.hostile() |> path("fleet-mode") |> query("key", key) |> query("mode", mode)).status
        try context.expect(status == 204, "the hostile server did not take mode \(mode): \(status)")
    }

    func count() async throws -> Count {
        try await control.send(context.hostile() |> path("fleet-count") |> query("key", key) |> decode(Count.self))
    }
}
