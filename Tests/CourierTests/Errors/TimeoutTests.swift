import Courier
import Foundation
import Testing

/// A timeout says which limit fired and after how long: the idle timeout, the deadline, an
/// attempt's, a made-up one; and its message never prints a secret.
@Suite("Timeouts: which limit fired, after how long")
struct TimeoutTests {
    private static let slow = Request.get |> url("https://api.test/export?token=s3cr3t-t0ken")

    @Test(.timeLimit(.minutes(1))) func theIdleTimeoutIsNamedWithItsLength() async throws {
        let clock = ManualClock()
        let api = InMemoryExecutor(routes: [.init(.get, "/export", .status(200).delayed(by: .seconds(60)))], clock: clock)
        let task = Task { try await api.send(Self.slow |> timeout(2)) }
        try await clock.waitForSleepers(2)  // the slow origin and the idle timer
        clock.advance(by: .seconds(2))
        let error = try #require(await #expect(throws: CourierError.self) { try await task.value })
        #expect(error.timeout == CourierError.Timeout(.idle, limit: .seconds(2)))
        #expect(error.summary == "the request timed out: nothing was received for 2 s (the request's idle timeout)")
        #expect(!error.description.contains("s3cr3t-t0ken"))
    }

    @Test(.timeLimit(.minutes(1))) func theDeadlineIsNamedWithItsLength() async throws {
        // The deadline runs on the continuous clock; the origin answers long after it.
        let api = InMemoryExecutor(routes: [.init(.get, "/export", .status(200).delayed(by: .seconds(3600)))])
        let error = try #require(await #expect(throws: CourierError.self) { try await api.send(Self.slow |> deadline(0.05)) })
        #expect(error.timeout == CourierError.Timeout(.deadline, limit: .milliseconds(50)))
        #expect(error.summary.contains("the call's deadline of 50 ms passed"))
    }

    @Test func anInjectedTimeoutSaysSo() async throws {
        let api = InMemoryExecutor.scripted([], then: .status(200)).with(FaultInjection([.init(.timeout, probability: 1)]))
        let error = try #require(await #expect(throws: CourierError.self) { try await api.send(Self.slow) })
        #expect(error.timeout?.kind == .injected)
        #expect(error.summary.contains("injected"))
    }

    @Test func lengthsPrintAsPeopleWriteThem() {
        #expect(CourierError.Timeout(.idle, limit: .seconds(30)).description.contains("30 s"))
        #expect(CourierError.Timeout(.connect, limit: .milliseconds(1500)).description.contains("1.5 s"))
        #expect(CourierError.Timeout(.attempt, limit: .milliseconds(250)).description.contains("250 ms"))
        #expect(CourierError.Timeout(.poolWait, limit: .microseconds(20)).description.contains("20 µs"))
        // Huge and unknown lengths print without a crash.
        #expect(!CourierError.Timeout(.deadline, limit: .seconds(Int64.max)).description.isEmpty)
        #expect(CourierError.Timeout(.deadline, limit: nil).description == "the call's deadline passed, retries and redirects included")
        #expect(CourierError.Timeout(.unspecified, limit: nil).description == "the transport gave up waiting")
    }
}
