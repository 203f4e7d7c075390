import CourierConformance
import Foundation
import Testing

/// Response heads a hostile server can send, each sent to CourierAHCHeadProbe in a child process
/// (a trap there cannot take the test run down).
///
/// A status below 100 (`HTTP/1.1 000 Zero`, `099`) makes AsyncHTTPClient 1.37 trap, whatever the
/// body's framing: its state machine takes every status below 200 but 101 for informational and
/// waits for another head, then hits `preconditionFailure("How can we receive a response body,
/// if we haven't received a head…")` when the body (or its end) arrives. SwiftNIO's parser passes
/// such a head on, and neither AsyncHTTPClient nor SwiftNIO lets a client add a handler to the
/// connection's pipeline to refuse it first: this package's Known limits article. The test below asserts the
/// trap, so the day a fixed AsyncHTTPClient arrives it fails and says so.
@Suite("AsyncHTTPClient: hostile response heads, in a child process", .timeLimit(.minutes(2)))
struct HostileHeadTests {
    @Test(arguments: [
        "status=000&framing=length", "status=000&framing=chunked", "status=000&framing=close", "status=099&framing=length",
        "status=000&framing=length&body=",
    ])
    func aStatusBelow100MakesAsyncHTTPClientTrap(head: String) async throws {
        let outcome = try await Probe.run(try servers().hostile + "/head?" + head)
        #expect(
            outcome.signal != nil,
            """
            AsyncHTTPClient no longer traps on a status below 100 (\(head)); the probe printed \
            \(outcome.output.debugDescription). Remove the limit from this package's Known limits article and move \
            these heads into the conformance case for heads that are not a final answer.
            """)
    }

    /// The heads that do not trap are bad responses, as on URLSession (the conformance suite holds
    /// both transports to this in-process; here it runs where a trap would be survived too).
    @Test(arguments: [
        "status=101&framing=length", "status=150&framing=length", "status=150&framing=chunked", "status=150&framing=close",
        "status=100&framing=length", "status=1000&framing=length", "status=abc&framing=length",
    ])
    func otherHeadsAreABadResponse(head: String) async throws {
        let outcome = try await Probe.run(try servers().hostile + "/head?" + head)
        #expect(outcome.signal == nil, "the probe was killed by signal \(outcome.signal ?? 0) on \(head)")
        #expect(outcome.output.hasPrefix("error badResponse:"), "\(head): \(outcome.output)")
    }
}

/// Runs CourierAHCHeadProbe (built with the tests: a dependency of this target) on a URL.
enum Probe {
    struct Outcome {
        /// What the probe printed.
        var output: String
        /// The signal that ended it, when one did.
        var signal: Int32?
    }

    /// The probe's executable, found beside this test binary (or in a directory above it, on
    /// platforms that bundle tests).
    static func executable() throws -> URL {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<5 {
            let candidate = directory.appendingPathComponent("CourierAHCHeadProbe")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory.deleteLastPathComponent()
        }
        throw ProbeMissing()
    }

    struct ProbeMissing: Error, CustomStringConvertible {
        var description: String { "CourierAHCHeadProbe was not found beside the test binary \(CommandLine.arguments[0])" }
    }

    /// Runs the probe and waits for it to end without blocking a Swift concurrency thread: its
    /// termination handler (on a Foundation thread) reads what it printed and resumes the wait.
    static func run(_ url: String) async throws -> Outcome {
        let process = Process()
        process.executableURL = try executable()
        process.arguments = [url]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        // No backtrace for the expected trap: printing one takes seconds.
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_BACKTRACE"] = "enable=no"
        process.environment = environment
        let ended: Result<Data, any Error> = await withCheckedContinuation { continuation in
            process.terminationHandler = { _ in continuation.resume(returning: .success(output.fileHandleForReading.readDataToEndOfFile())) }
            do {
                try process.run()
            } catch {
                continuation.resume(returning: .failure(error))
            }
        }
        let printed = String(decoding: try ended.get(), as: UTF8.self)
        let signal = process.terminationReason == .uncaughtSignal ? process.terminationStatus : nil
        return Outcome(output: printed.trimmingCharacters(in: .whitespacesAndNewlines), signal: signal)
    }
}
