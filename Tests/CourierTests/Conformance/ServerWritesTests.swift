import CourierCore
import CourierTesting
@testable import CourierConformance
import Foundation
import Testing

/// How a timing case judges a timeout that should not have happened: by the server's record of
/// when it wrote, not by the client's clock. The HTTP/2 conformance run failed on a quiet machine
/// when hypercorn queued a drip behind requests earlier cases had abandoned (six threads a
/// worker, one worker per HTTP/2 connection): the head came late three times in a row, and the
/// case blamed the transport.
@Suite struct ServerWritesTests {
    private static func events(_ pairs: [(String, Double)]) -> ServerWrites {
        ServerWrites(events: pairs.map { ServerWrites.Event(name: $0.0, at: $0.1) }, done: true)
    }

    /// A drip as httpbin writes it: arrival, six bytes 0.2 s apart, the end.
    private static let steadyDrip = events([("arrived", 10), ("started", 10.001), ("wrote", 10.002), ("wrote", 10.2), ("wrote", 10.4), ("wrote", 10.6), ("wrote", 10.8), ("wrote", 11), ("end", 11.2)])
    /// The same drip queued 3 s for a worker thread before httpbin saw it.
    private static let queuedDrip = events([("arrived", 10), ("started", 13), ("wrote", 13.001), ("wrote", 13.2), ("wrote", 13.4), ("end", 13.6)])

    @Test func aServerThatKeptWritingLeavesTheTimeoutToTheClient() {
        #expect(Self.steadyDrip.verdict(timeout: 0.7) == .client(longestSilence: Self.steadyDrip.longestSilence ?? -1))
        let silence = Self.steadyDrip.longestSilence ?? 0
        #expect(abs(silence - 0.2) < 0.001)
    }

    @Test func aServerThatQueuedTheRequestOwnsTheTimeout() {
        #expect(Self.queuedDrip.verdict(timeout: 0.7) == .server(silence: 3))
    }

    @Test func noRecordDecidesNothing() {
        #expect(Self.events([]).verdict(timeout: 0.7) == .unknown)
        // Arrived and never wrote: the response is not over; no verdict on a partial record.
        #expect(Self.events([("arrived", 1)]).verdict(timeout: 0.7) == .unknown)
    }

    @Test func eventsAreOrderedByTimeNotByArrivalInTheFile() {
        // Two worker processes append to one file; their lines may interleave out of order.
        let shuffled = Self.events([("wrote", 10.4), ("arrived", 10), ("wrote", 10.2), ("end", 10.6)])
        let silence = shuffled.longestSilence ?? 0
        #expect(abs(silence - 0.2) < 0.001)
    }

    /// A fake httpbin: `/drip` fails with a timeout on the tries `timesOut` says, and records
    /// `record(try)` as what the server did; `/courier/writes` serves the records (or 404 when
    /// `keepsRecords` is false).
    private final class FakeServer: Sendable {
        let tries = Locked(0)
        let records = Locked<[String: ServerWrites]>([:])
        let timesOut: @Sendable (Int) -> Bool
        let record: @Sendable (Int) -> ServerWrites
        let keepsRecords: Bool

        init(keepsRecords: Bool = true, timesOut: @escaping @Sendable (Int) -> Bool, record: @escaping @Sendable (Int) -> ServerWrites) {
            self.keepsRecords = keepsRecords
            self.timesOut = timesOut
            self.record = record
        }

        func executor() -> InMemoryExecutor {
            InMemoryExecutor { request in
                let items = URLComponents(string: request.url?.absoluteString ?? "")?.queryItems ?? []
                if request.path.hasSuffix("/courier/writes") {
                    guard self.keepsRecords else { return .status(404) }
                    let key = items.first { $0.name == "key" }?.value ?? ""
                    guard let writes = self.records.withLock({ $0[key] }) else { return .json(ServerWrites(events: [], done: true)) }
                    return .json(writes)
                }
                let attempt = self.tries.withLock { tries in
                    tries += 1
                    return tries
                }
                let key = items.first { $0.name == "courier-writes" }?.value ?? ""
                self.records.withLock { $0[key] = self.record(attempt) }
                if self.timesOut(attempt) { throw CourierError(.timedOut, request: request) }
                return .text("******")
            }
        }
    }

    private func run(_ server: FakeServer) async throws -> Int {
        let context = ConformanceContext(name: "test", servers: ConformanceSuite.referenceServers) { server.executor() }
        let drip = context.httpbin() |> path("drip") |> timeout(0.7)
        return try await context.withoutServerSilence("send", drip) { try await context.executor().send($0).body.count }
    }

    @Test func timeoutsWhileTheServerQueuedTheRequestAreTriedAgain() async throws {
        // The CI failure: three timeouts in a row, each while the server held the head back.
        let server = FakeServer(timesOut: { $0 <= 3 }, record: { $0 <= 3 ? Self.queuedDrip : Self.steadyDrip })
        #expect(try await run(server) == 6)
        #expect(server.tries.withLock { $0 } == 4)
    }

    @Test func timeoutsWhileTheServerKeptWritingFailTheCaseOnTheThird() async throws {
        let server = FakeServer(timesOut: { _ in true }, record: { _ in Self.steadyDrip })
        let failure = await #expect(throws: ConformanceFailure.self) { try await run(server) }
        #expect(failure?.description.contains("timed out three times while the server kept writing") == true)
        #expect(server.tries.withLock { $0 } == 3)
    }

    @Test func oneOrTwoStallsOfThisMachinePass() async throws {
        let server = FakeServer(timesOut: { $0 <= 2 }, record: { _ in Self.steadyDrip })
        #expect(try await run(server) == 6)
    }

    @Test func aServerSilentOnEveryTryFailsTheCaseNamingTheServer() async throws {
        let server = FakeServer(timesOut: { _ in true }, record: { _ in Self.queuedDrip })
        let failure = await #expect(throws: ConformanceFailure.self) { try await run(server) }
        #expect(failure?.description.contains("a server problem, not the transport's") == true)
        #expect(server.tries.withLock { $0 } == 10)
    }

    @Test func aServerWithoutRecordsCountsEveryTimeout() async throws {
        let failing = FakeServer(keepsRecords: false, timesOut: { _ in true }, record: { _ in Self.queuedDrip })
        let failure = await #expect(throws: ConformanceFailure.self) { try await run(failing) }
        #expect(failure?.description.contains("no record of the server's writes") == true)
        let stalling = FakeServer(keepsRecords: false, timesOut: { $0 <= 2 }, record: { _ in Self.queuedDrip })
        #expect(try await run(stalling) == 6)
    }
}
