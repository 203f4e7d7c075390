import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// HTTPS over URLSession against the TLS listeners `scripts/test` starts (certificates made at test
/// time by a private test authority). FoundationNetworking on Linux trusts only the system's roots
/// and cannot be given another per session, so there every listener fails the same typed,
/// readable way (unknown issuer), and none reads a request byte. The finer causes (expired, not yet
/// valid, host name) are met for real in `TrustedTLSTests`, which `scripts/test` runs where the
/// system's bundle holds the test CA, and read from libcurl's exact words in `TLSProblemTests`.
@Suite("Integration: TLS over URLSession", .serialized, .timeLimit(.minutes(2)))
struct TLSTests {
    struct MissingServer: Error, CustomStringConvertible {
        var name: String
        var description: String { "\(name) is not set: run the tests with scripts/test, which starts the servers" }
    }

    private static func environment(_ name: String) throws -> String {
        guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else { throw MissingServer(name: name) }
        return value
    }

    /// How many requests each listener has read, from the plain-HTTP control listener.
    private static func seen(_ executor: URLSessionExecutor) async throws -> [String: Int] {
        let control = try environment("COURIER_TLS_CONTROL_URL")
        return try await executor.send(.get |> url(control + "/seen") |> decode([String: Int].self))
    }

    @Test func aServerThisClientCannotTrustIsRefusedReadablyAndSentNothing() async throws {
        let names = ["COURIER_TLS_URL", "COURIER_TLS_EXPIRED_URL", "COURIER_TLS_FUTURE_URL", "COURIER_TLS_WRONGHOST_URL",
            "COURIER_TLS_UNKNOWN_URL", "COURIER_TLS_MTLS_URL"]
        let executor = URLSessionExecutor(configuration: .ephemeral)
        let before = try await Self.seen(executor)
        for name in names {
            let address = try Self.environment(name)
            let request = Request.post |> url(address + "/post") |> bearer("TLS-SECRET-TOKEN") |> json(["password": "hunter2"])
            let error = await #expect(throws: CourierError.self) { _ = try await executor.send(request) }
            guard case .transport(let failure)? = error?.cause else {
                Issue.record("\(name): \(String(describing: error))")
                continue
            }
            #expect(failure.kind == .secureConnectionFailed, "\(name): \(failure)")
            #if canImport(FoundationNetworking)
                #expect(failure.tlsProblem == .unknownIssuer, "\(name): \(failure)")
            #endif
            #expect(error?.isTransient == false)
            let printed = "\(String(describing: error)) \(String(reflecting: error))"
            #expect(!printed.contains("TLS-SECRET-TOKEN") && !printed.contains("hunter2"))
        }
        #if canImport(FoundationNetworking)
            // No handshake succeeded, so no listener read a request.
            let after = try await Self.seen(executor)
            #expect(after == before, "a listener read a request: \(before) then \(after)")
        #endif
    }
}
