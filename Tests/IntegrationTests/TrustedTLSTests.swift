import Courier
import CourierConformance
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// HTTPS over URLSession with the test authority trusted: FoundationNetworking reads only the
/// system's CA bundle, so `scripts/test` runs this suite in a private mount namespace whose
/// bundle holds the system's authorities and the test CA (a bind mount that exists for that one
/// process: nothing on the machine changes). There every certificate failure is met for real, and
/// the whole conformance suite runs over HTTPS.
@Suite("Integration: URLSession over HTTPS, the test CA trusted", .serialized, .timeLimit(.minutes(5)))
struct TrustedTLSTests {
    struct NotInNamespace: Error, CustomStringConvertible {
        var description: String {
            "COURIER_TLS_SYSTEM_TRUSTS_TEST_CA is not set: scripts/test runs this suite in a mount namespace where the "
                + "system's CA bundle holds the test CA"
        }
    }

    private static func environment(_ name: String) throws -> String {
        guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else { throw TLSTests.MissingServer(name: name) }
        return value
    }

    private static func requireTrust() throws {
        guard ProcessInfo.processInfo.environment["COURIER_TLS_SYSTEM_TRUSTS_TEST_CA"] == "1" else { throw NotInNamespace() }
    }

    private static func seen(_ executor: URLSessionExecutor) async throws -> [String: Int] {
        try await executor.send(.get |> url(try environment("COURIER_TLS_CONTROL_URL") + "/seen") |> decode([String: Int].self))
    }

    @Test func everyCertificateFailureSaysWhatFailedAndSendsNothing() async throws {
        try Self.requireTrust()
        let executor = URLSessionExecutor(configuration: .ephemeral)
        let valid = try await executor.send(.get |> url(try Self.environment("COURIER_TLS_URL") + "/get"))
        #expect(valid.status == 200)
        let before = try await Self.seen(executor)
        let cases: [(String, String, TLSProblem)] = [
            ("COURIER_TLS_EXPIRED_URL", "expired", .expired), ("COURIER_TLS_FUTURE_URL", "future", .notYetValid),
            ("COURIER_TLS_WRONGHOST_URL", "wronghost", .hostnameMismatch), ("COURIER_TLS_UNKNOWN_URL", "unknown", .unknownIssuer),
        ]
        for (name, _, expected) in cases {
            let request = Request.post |> url(try Self.environment(name) + "/post") |> bearer("TLS-SECRET-TOKEN")
                |> json(["password": "hunter2"])
            let error = await #expect(throws: CourierError.self) { _ = try await executor.send(request) }
            guard case .transport(let failure)? = error?.cause else {
                Issue.record("\(name): \(String(describing: error))")
                continue
            }
            #expect(failure.kind == .secureConnectionFailed)
            #expect(failure.tlsProblem == expected, "\(name): \(failure)")
            #expect(error?.isTransient == false)
            let printed = "\(String(describing: error)) \(String(reflecting: error))"
            #expect(printed.contains(expected.description))
            #expect(!printed.contains("TLS-SECRET-TOKEN") && !printed.contains("hunter2"))
        }
        let after = try await Self.seen(executor)
        for (_, listener, _) in cases { #expect(after[listener] == before[listener], "\(listener) read a request") }
    }

    /// FoundationNetworking cannot present a client certificate: the server's refusal arrives
    /// after the handshake, as libcurl's "getpeername() failed", which over TLS is a
    /// `secureConnectionFailed` (never a transient lost connection that retry middleware would
    /// retry), and no request reaches the server.
    @Test func aServerThatRequiresAClientCertificateReadsNothing() async throws {
        try Self.requireTrust()
        let executor = URLSessionExecutor(configuration: .ephemeral)
        let before = try await Self.seen(executor)
        let error = await #expect(throws: CourierError.self) {
            _ = try await executor.send(.get |> url(try Self.environment("COURIER_TLS_MTLS_URL") + "/get"))
        }
        guard case .transport(let failure)? = error?.cause else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(failure.kind == .secureConnectionFailed, "\(failure)")
        #expect(error?.isTransient == false)
        #expect(failure.message.contains("client certificate"))
        let after = try await Self.seen(executor)
        #expect(after["mtls"] == before["mtls"])
    }

    /// The whole conformance suite, both httpbin origins over HTTPS.
    @Test(arguments: ConformanceSuite.cases)
    func conformsOverHTTPS(_ check: ConformanceCase) async throws {
        try Self.requireTrust()
        try await check.run(servers: try ConformanceServers.httpsFromEnvironment()) { URLSessionExecutor(configuration: .ephemeral) }
    }
}
