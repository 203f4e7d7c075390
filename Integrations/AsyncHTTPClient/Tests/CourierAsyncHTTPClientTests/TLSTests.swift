import AsyncHTTPClient
import Courier
import CourierConformance
import CourierAsyncHTTPClient
import Foundation
import NIOPosix
import Testing

/// HTTPS against the TLS listeners `scripts/test` starts (certificates made at test time by a
/// test certificate authority): the trust the client is given decides, every failure is a typed
/// `secureConnectionFailed` that says what failed, and no request byte reaches a server whose
/// handshake failed.
@Suite("AsyncHTTPClient: TLS", .serialized, .timeLimit(.minutes(2)))
struct TLSTests {
    struct MissingServer: Error, CustomStringConvertible {
        var name: String
        var description: String { "\(name) is not set: run the tests with scripts/test, which starts the servers" }
    }

    /// The listeners' URLs and the certificate directory.
    struct Servers {
        var directory: String
        var valid, expired, future, wrongHost, unknown, mutual: String

        static func fromEnvironment() throws -> Servers {
            let environment = ProcessInfo.processInfo.environment
            func value(_ name: String) throws -> String {
                guard let value = environment[name], !value.isEmpty else {
                    throw MissingServer(name: name)
                }
                return value
            }
            return Servers(
                directory: try value("COURIER_TLS_DIR"), valid: try value("COURIER_TLS_URL"), expired: try value("COURIER_TLS_EXPIRED_URL"),
                future: try value("COURIER_TLS_FUTURE_URL"), wrongHost: try value("COURIER_TLS_WRONGHOST_URL"),
                unknown: try value("COURIER_TLS_UNKNOWN_URL"), mutual: try value("COURIER_TLS_MTLS_URL"))
        }

        func file(_ name: String) -> String { directory + "/" + name }
    }

    /// A client made with Courier's ``TLSOptions``: trusting the test CA beside the system's roots
    /// (or only the system's), optionally presenting a client certificate (`stem.pem`/`stem.key`).
    private static func withExecutor<T>(
        _ servers: Servers, trust: TLSOptions.Trust? = nil, clientCertificate stem: String? = nil,
        _ body: (AsyncHTTPClientExecutor) async throws -> T
    ) async throws -> T {
        let authority = try TLSOptions.Certificate(contentsOf: URL(fileURLWithPath: servers.file("ca.pem")))
        var tls = TLSOptions(trust: trust ?? .systemAnd([authority]))
        if let stem {
            tls.clientIdentity = try TLSOptions.ClientIdentity(
                certificateFile: URL(fileURLWithPath: servers.file(stem + ".pem")),
                privateKeyFile: URL(fileURLWithPath: servers.file(stem + ".key")))
        }
        let configuration = try AsyncHTTPClientExecutor.clientConfiguration(tls: tls)
        let client = HTTPClient(eventLoopGroup: .singletonMultiThreadedEventLoopGroup, configuration: configuration)
        do {
            let result = try await body(try AsyncHTTPClientExecutor(client: client))
            try await client.shutdown()
            return result
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    /// How many requests each listener has read.
    private static func seen(_ servers: Servers) async throws -> [String: Int] {
        try await withExecutor(servers) { try await $0.send(.get |> url(servers.valid + "/seen") |> decode([String: Int].self)) }
    }

    private static func problem(_ error: CourierError?) -> TLSProblem? {
        guard case .transport(let failure)? = error?.cause, failure.kind == .secureConnectionFailed else { return nil }
        return failure.tlsProblem
    }

    @Test func aServerTheClientTrustsAnswers() async throws {
        let servers = try Servers.fromEnvironment()
        let status = try await Self.withExecutor(servers) { try await $0.send(.get |> url(servers.valid + "/get")).status }
        #expect(status == 200)
        // Trusting the test CA alone works too.
        let authority = try TLSOptions.Certificate(contentsOf: URL(fileURLWithPath: servers.file("ca.pem")))
        let only = try await Self.withExecutor(servers, trust: .only([authority])) { try await $0.send(.get |> url(servers.valid + "/get")).status }
        #expect(only == 200)
    }

    @Test func optionsThatCannotBeReadAreRefusedWithoutShowingTheKey() throws {
        let servers = try Servers.fromEnvironment()
        let chain = try TLSOptions.Certificate.certificates(pem: String(contentsOfFile: servers.file("client.pem"), encoding: .utf8))
        let key = try String(contentsOfFile: servers.file("client.key"), encoding: .utf8)
        let identity = try TLSOptions.ClientIdentity(certificateChain: chain, privateKeyPEM: key)
        let keyBody = key.split(separator: "\n")[1]
        for printed in ["\(identity)", String(reflecting: identity), "\(TLSOptions(clientIdentity: identity))"] {
            #expect(!printed.contains(keyBody))
        }
        var dumped = ""
        dump(TLSOptions(clientIdentity: identity), to: &dumped)
        #expect(!dumped.contains(keyBody))
        // A key SwiftNIO SSL cannot read is a typed error naming no key material.
        let broken = try TLSOptions.ClientIdentity(
            certificateChain: chain, privateKeyPEM: "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n")
        #expect(throws: TLSOptions.Invalid.self) { try AsyncHTTPClientExecutor.clientConfiguration(tls: TLSOptions(clientIdentity: broken)) }
        // Pinned keys, which AsyncHTTPClient cannot check, are refused rather than ignored.
        let pin = try TLSOptions.PublicKeyPin(base64: String(contentsOfFile: servers.file("spki.txt"), encoding: .utf8))
        let refused = #expect(throws: TLSOptions.Invalid.self) {
            try AsyncHTTPClientExecutor.clientConfiguration(tls: TLSOptions(pinnedKeys: [pin]))
        }
        #expect(refused?.reason.contains("NIOExecutor") == true)
    }

    @Test func everyCertificateFailureIsTypedReadableAndSendsNothing() async throws {
        let servers = try Servers.fromEnvironment()
        let cases: [(String, TLSProblem)] = [
            (servers.expired, .untrustedCertificate), (servers.future, .untrustedCertificate),
            (servers.unknown, .untrustedCertificate), (servers.wrongHost, .hostnameMismatch),
        ]
        for (address, expected) in cases {
            let request = Request.post |> url(address + "/post") |> bearer("TLS-SECRET-TOKEN") |> json(["password": "hunter2"])
            let error = await #expect(throws: CourierError.self) {
                try await Self.withExecutor(servers) { _ = try await $0.send(request) }
            }
            #expect(Self.problem(error) == expected, "\(address): \(String(describing: error))")
            #expect(error?.isTransient == false)
            let printed = "\(String(describing: error)) \(String(reflecting: error))"
            #expect(printed.contains(expected.description))
            #expect(!printed.contains("TLS-SECRET-TOKEN") && !printed.contains("hunter2"))
            #expect(!printed.contains("NIOSSL."), "a type name instead of a reason: \(printed)")
        }
        // An untrusted server is refused the same way when the client trusts only the system's roots.
        let error = await #expect(throws: CourierError.self) {
            try await Self.withExecutor(servers, trust: .system) { _ = try await $0.send(.get |> url(servers.valid + "/get")) }
        }
        #expect(Self.problem(error) == .untrustedCertificate)
        let seen = try await Self.seen(servers)
        for listener in ["expired", "future", "unknown", "wronghost"] { #expect(seen[listener] == 0, "\(listener) read a request") }
    }

    @Test func aClientCertificateIsRequiredAndOnlyTheTrustedOneIsAccepted() async throws {
        let servers = try Servers.fromEnvironment()
        // Counted from here: the listener is shared with the other packages' tests in one run.
        let start = try await Self.seen(servers)["mtls"] ?? 0
        let without = await #expect(throws: CourierError.self) {
            try await Self.withExecutor(servers) { _ = try await $0.send(.get |> url(servers.mutual + "/get")) }
        }
        #expect(Self.problem(without) == .clientCertificateRequired)
        #expect(without?.isTransient == false)
        let refused = await #expect(throws: CourierError.self) {
            try await Self.withExecutor(servers, clientCertificate: "other-client") { _ = try await $0.send(.get |> url(servers.mutual + "/get")) }
        }
        #expect(Self.problem(refused) == .clientCertificateRefused)
        let before = try await Self.seen(servers)["mtls"] ?? 0
        #expect(before == start, "a refused client's request was read")
        let status = try await Self.withExecutor(servers, clientCertificate: "client") { try await $0.send(.get |> url(servers.mutual + "/get")).status }
        #expect(status == 200)
    }

    /// The #31 trial: a 307 from https to http would have re-sent the password in clear text.
    @Test func aPostRedirectedFromHTTPSToHTTPIsRefused() async throws {
        let servers = try Servers.fromEnvironment()
        let plain = try ConformanceServers.fromEnvironment().httpbin
        let target = plain + "/post"
        let request = Request.post |> url(servers.valid + "/redirect") |> query("to", target) |> query("status", "307")
            |> form(["password": "hunter2"])
        let error = await #expect(throws: CourierError.self) {
            try await Self.withExecutor(servers) { _ = try await $0.send(request) }
        }
        guard case .transport(let failure)? = error?.cause else { Issue.record("\(String(describing: error))"); return }
        #expect(failure.kind == .redirectFailed)
        #expect(failure.message.contains("clear text"))
    }
}
