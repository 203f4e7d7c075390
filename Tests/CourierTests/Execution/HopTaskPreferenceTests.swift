import Courier
import CourierTesting
import Foundation
import Synchronization
import Testing

/// A hop the idle timer watches runs in a task of its own on transports that do not gather under
/// the rules; that task prefers the task executor its caller prefers, so a caller on an event
/// loop keeps its transport's work (a connection opened, a WebSocket's reads) on that loop.
@Suite("Exchange: a timed hop's task keeps the caller's executor")
struct HopTaskPreferenceTests {
    @Test func aTimedHopRunsWhereItsCallerPrefers() async throws {
        #if compiler(>=6.3)
            guard #available(macOS 26.4, iOS 26.4, tvOS 26.4, watchOS 26.4, visionOS 26.4, *) else { return }
            let seen = Mutex<[String: Bool]>([:])
            let executor = InMemoryExecutor { request in
                seen.withLock { $0[request.url?.path ?? ""] = DecodePlacementTests.QueueExecutor.isCurrent }
                return .status(200, body: Data("ok".utf8))
            }
            let preferred = DecodePlacementTests.QueueExecutor()
            try await Task(executorPreference: preferred) {
                _ = try await executor.send(.get |> url("http://example.test/timed") |> timeout(30) |> decodeData())
                _ = try await executor.send(.get |> url("http://example.test/untimed") |> decodeData())
            }.value
            // And without a preference, a timed hop runs where `Task { }` would.
            _ = try await executor.send(.get |> url("http://example.test/free") |> timeout(30) |> decodeData())
            let placements = seen.withLock { $0 }
            #expect(placements["/timed"] == true, "the timed hop's task prefers the caller's executor")
            #expect(placements["/untimed"] == true, "an untimed hop runs in the caller's task")
            #expect(placements["/free"] == false)
        #endif
    }
}
