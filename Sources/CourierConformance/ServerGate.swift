import CourierCore
import CourierResilience
import CourierTesting
import Foundation

/// A response the test server holds until the test opens it: `scripts/httpbin_wsgi.py`'s
/// `/courier/gate`. A check that a call ends *before* the server answers (a cancel, a stopped
/// reader) asks, once the call has ended, whether the gate was still held: a question of order,
/// which a busy machine cannot change, where a stopwatch bound can be pushed past. (Package
/// access: the conformance cases and Courier's own integration tests use it.)
package struct ServerGate: Sendable {
    /// The httpbin the gate is on.
    package let httpbin: String
    /// The executor that watches and opens the gate: one of its own, not the call's (that call may
    /// be cancelled).
    package let executor: any Executor
    /// The key the server holds the gate under.
    package let key = "gate-\(UUID().uuidString)"

    /// What the server said of the gate when the test opened it.
    package enum State: String, Decodable, Sendable {
        /// Still holding: the call ended before the server could answer.
        case held
        /// The server's own limit (60 s) released it first.
        case released
        /// No gate under the key: the request never reached the server's app.
        case unknown
    }

    /// A gate on `httpbin`, watched and opened through `executor`.
    package init(httpbin: String, executor: any Executor) {
        self.httpbin = httpbin
        self.executor = executor
    }

    /// The gated request: held before its head, or after its head and `head` bytes (then `head`
    /// bytes more once opened).
    package func request(_ method: Request = .get, head: Int? = nil) -> Request {
        var request = method |> baseURL(httpbin) |> path("courier", "gate") |> query("key", key)
        if let head { request = request |> query("head", head) }
        return request
    }

    /// Waits until the server holds the gate: the request (and, with a head, its first bytes)
    /// reached the server.
    package func waitUntilHeld() async throws {
        while true {
            let writes = try await executor.send(.get |> baseURL(httpbin) |> path("courier", "writes") |> query("key", key) |> decode(ServerWrites.self))
            if writes.events.contains(where: { $0.name == "held" }) { return }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Opens the gate, so the server's thread is free, and says what it was before.
    package func open() async throws -> State {
        struct Opened: Decodable { var was: State }
        return try await executor.send(.get |> baseURL(httpbin) |> path("courier", "open") |> query("key", key) |> decode(Opened.self)).was
    }
}
