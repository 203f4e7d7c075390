import CourierConformance
import CourierCore
import CourierResilience
import CourierTesting
import Foundation

extension Soak {
    /// The command-line front of a soak executable: reads `--seconds N`, `--concurrency N`,
    /// `--seed N` and `--only OPERATION` from the arguments and the servers from the environment (as `scripts/test`
    /// exports them), runs the soak, prints the report and exits with status 1 when a check
    /// failed (2 for bad arguments or missing servers).
    ///
    /// ```swift
    /// @main struct MySoak {
    ///     static func main() async { await Soak.main(named: "MyTransport") { MyExecutor() } }
    /// }
    /// ```
    /// - Parameters:
    ///   - name: The transport's name, for the report.
    ///   - makeExecutor: Makes the executor under test.
    public static func main(named name: String, _ makeExecutor: @Sendable () -> any Executor) async -> Never {
        var configuration = SoakConfiguration()
        var arguments = CommandLine.arguments.dropFirst()[...]
        while let option = arguments.popFirst() {
            if option == "--only", let name = arguments.popFirst() {
                guard let operation = SoakOperation(rawValue: name) else {
                    printError("soak: --only takes one of \(SoakOperation.allCases.map(\.rawValue).joined(separator: ", "))")
                    exit(2)
                }
                configuration.only = operation
                continue
            }
            guard let value = arguments.popFirst(), let number = UInt64(value) else {
                printError("soak: \(option) needs a whole number")
                exit(2)
            }
            switch option {
            case "--seconds":
                var resized = SoakConfiguration(duration: .seconds(Int64(number)), concurrency: configuration.concurrency, seed: configuration.seed)
                resized.only = configuration.only
                configuration = resized
            case "--concurrency": configuration.concurrency = max(1, Int(min(number, 4096)))
            case "--seed": configuration.seed = number
            default:
                printError("soak: unknown option \(option) (--seconds, --concurrency, --seed, --only)")
                exit(2)
            }
        }
        let servers: ConformanceServers
        do {
            servers = try ConformanceServers.fromEnvironment()
        } catch {
            printError("soak: \(error)")
            exit(2)
        }
        // A watchdog off the Swift concurrency threads: a deadlock that stops them (the soak has
        // found one) must still end the run, with a failure, not hang it.
        let grace = configuration.duration + .seconds(120)
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(Int(grace.components.seconds))) {
            printError("soak: \(name) FAILED: calls still running 120 s after the end (a hang)")
            exit(1)
        }
        let report = await run(makeExecutor(), named: name, servers: servers, configuration: configuration)
        print(report)
        exit(report.passed ? 0 : 1)
    }

    private static func printError(_ message: String) {
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }
}
