import Courier
import CourierConformance
import CourierNIO
import Foundation
import Testing

/// HTTPS against the TLS listeners `scripts/test` starts (certificates made at test time by a test
/// authority): every failure, a pin mismatch included, is a typed `secureConnectionFailed` that
/// says what failed, and no request byte reaches a server that failed.
@Suite("NIOExecutor: TLS and pinned keys", .serialized, .timeLimit(.minutes(2)))
struct TLSTests {
    struct MissingServer: Error, CustomStringConvertible {
        var name: String
        var description: String { "\(name) is not set: run the tests with scripts/test, which starts the servers" }
    }

    static func environment(_ name: String) throws -> String {
        guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else { throw MissingServer(name: name) }
        return value
    }

    static func file(_ name: String) throws -> URL { URL(fileURLWithPath: try environment("COURIER_TLS_DIR") + "/" + name) }

    static func authority() throws -> TLSOptions.Certificate { try TLSOptions.Certificate(contentsOf: try file("ca.pem")) }

    /// Runs `body` on an executor of its own made with `tls`, shut down after.
    static func withExecutor<T>(_ tls: TLSOptions, _ body: (NIOExecutor) async throws -> T) async throws -> T {
        let executor = try NIOExecutor(configuration: NIOTransport.Configuration(tls: tls))
        do {
            let result = try await body(executor)
            await executor.transport.shutdown()
            return result
        } catch {
            await executor.transport.shutdown()
            throw error
        }
    }

    static func problem(_ error: CourierError?) -> TLSProblem? {
        guard case .transport(let failure)? = error?.cause, failure.kind == .secureConnectionFailed else { return nil }
        return failure.tlsProblem
    }

    /// How many requests each listener has read.
    static func seen() async throws -> [String: Int] {
        let valid = try environment("COURIER_TLS_URL")
        return try await withExecutor(TLSOptions(trust: .only([try authority()]))) {
            try await $0.send(.get |> url(valid + "/seen") |> decode([String: Int].self))
        }
    }

    @Test func aServerTheClientTrustsAnswers() async throws {
        let valid = try Self.environment("COURIER_TLS_URL")
        for trust in [TLSOptions.Trust.systemAnd([try Self.authority()]), .only([try Self.authority()])] {
            let status = try await Self.withExecutor(TLSOptions(trust: trust)) { try await $0.send(.get |> url(valid + "/get")).status }
            #expect(status == 200)
        }
    }

    @Test func everyCertificateFailureIsTypedReadableAndSendsNothing() async throws {
        let cases: [(String, TLSProblem)] = [
            // Told apart: BoringSSL says only CERTIFICATE_VERIFY_FAILED; the refused certificate's
            // dates say which (a user could not tell an expired certificate from a private CA).
            (try Self.environment("COURIER_TLS_EXPIRED_URL"), .expired),
            (try Self.environment("COURIER_TLS_FUTURE_URL"), .notYetValid),
            (try Self.environment("COURIER_TLS_UNKNOWN_URL"), .unknownIssuer),
            (try Self.environment("COURIER_TLS_WRONGHOST_URL"), .hostnameMismatch),
        ]
        for (address, expected) in cases {
            let request = Request.post |> url(address + "/post") |> bearer("TLS-SECRET-TOKEN") |> json(["password": "hunter2"])
            let error = await #expect(throws: CourierError.self) {
                try await Self.withExecutor(TLSOptions(trust: .systemAnd([try Self.authority()]))) { _ = try await $0.send(request) }
            }
            #expect(Self.problem(error) == expected, "\(address): \(String(describing: error))")
            #expect(error?.isTransient == false)
            let printed = "\(String(describing: error)) \(String(reflecting: error))"
            #expect(printed.contains(expected.description))
            #expect(!printed.contains("TLS-SECRET-TOKEN") && !printed.contains("hunter2"))
        }
        let seen = try await Self.seen()
        for listener in ["expired", "future", "unknown", "wronghost"] { #expect(seen[listener] == 0, "\(listener) read a request") }
    }

    @Test func aClientCertificateIsRequiredAndOnlyTheTrustedOneIsAccepted() async throws {
        let mutual = try Self.environment("COURIER_TLS_MTLS_URL")
        func identity(_ stem: String) throws -> TLSOptions.ClientIdentity {
            try TLSOptions.ClientIdentity(certificateFile: try Self.file(stem + ".pem"), privateKeyFile: try Self.file(stem + ".key"))
        }
        let trust = TLSOptions.Trust.only([try Self.authority()])
        let without = await #expect(throws: CourierError.self) {
            try await Self.withExecutor(TLSOptions(trust: trust)) { _ = try await $0.send(.get |> url(mutual + "/get")) }
        }
        #expect(Self.problem(without) == .clientCertificateRequired, "\(String(describing: without))")
        let refused = await #expect(throws: CourierError.self) {
            try await Self.withExecutor(TLSOptions(trust: trust, clientIdentity: try identity("other-client"))) {
                _ = try await $0.send(.get |> url(mutual + "/get"))
            }
        }
        #expect(Self.problem(refused) == .clientCertificateRefused, "\(String(describing: refused))")
        let status = try await Self.withExecutor(TLSOptions(trust: trust, clientIdentity: try identity("client"))) {
            try await $0.send(.get |> url(mutual + "/get")).status
        }
        #expect(status == 200)
    }

    /// The pin of a certificate's key, read by Courier from the PEM, is the one OpenSSL prints.
    @Test func aPinReadFromTheCertificateIsTheKeysDigest() throws {
        let printed = try String(contentsOf: try Self.file("spki.txt"), encoding: .utf8)
        let server = try TLSOptions.Certificate(contentsOf: try Self.file("server.pem"))
        #expect(try TLSOptions.PublicKeyPin(publicKeyOf: server) == TLSOptions.PublicKeyPin(base64: printed))
        #expect(try TLSOptions.PublicKeyPin(base64: "sha256/" + printed) == TLSOptions.PublicKeyPin(base64: printed))
        #expect(throws: TLSOptions.Invalid.self) { try TLSOptions.PublicKeyPin(base64: "c2hvcnQ=") }
        #expect(throws: TLSOptions.Invalid.self) { try TLSOptions.PublicKeyPin(base64: "not base64!") }
    }

    @Test func aServerWhoseKeyIsPinnedAnswers() async throws {
        let valid = try Self.environment("COURIER_TLS_URL")
        let pin = try TLSOptions.PublicKeyPin(base64: try String(contentsOf: try Self.file("spki.txt"), encoding: .utf8))
        let other = try TLSOptions.PublicKeyPin(publicKeyOf: try TLSOptions.Certificate(contentsOf: try Self.file("client.pem")))
        let tls = TLSOptions(trust: .only([try Self.authority()]), pinnedKeys: [other, pin])
        let status = try await Self.withExecutor(tls) { try await $0.send(.get |> url(valid + "/get")).status }
        #expect(status == 200)
    }

    /// A trusted server whose key is not pinned: a typed, permanent pin mismatch, and the request
    /// (its token, its body) never leaves the client.
    @Test func aServerWhoseKeyIsNotPinnedIsRefusedBeforeTheRequestIsSent() async throws {
        let valid = try Self.environment("COURIER_TLS_URL")
        let before = try await Self.seen()["valid"] ?? 0
        let other = try TLSOptions.PublicKeyPin(publicKeyOf: try TLSOptions.Certificate(contentsOf: try Self.file("client.pem")))
        let tls = TLSOptions(trust: .only([try Self.authority()]), pinnedKeys: [other])
        let request = Request.post |> url(valid + "/post") |> bearer("PINNED-SECRET") |> json(["password": "hunter2"])
        let error = await #expect(throws: CourierError.self) {
            try await Self.withExecutor(tls) { _ = try await $0.send(request) }
        }
        #expect(Self.problem(error) == .pinMismatch, "\(String(describing: error))")
        #expect(error?.isTransient == false)
        let printed = "\(String(describing: error)) \(String(reflecting: error))"
        #expect(printed.contains(TLSProblem.pinMismatch.description))
        #expect(!printed.contains("PINNED-SECRET") && !printed.contains("hunter2"))
        // The server read no request since (`/seen` counts none).
        let after = try await Self.seen()["valid"] ?? 0
        #expect(after == before)
    }

    /// A pin does not replace verification: an untrusted server with the pinned key is refused
    /// as untrusted.
    @Test func aPinnedKeyDoesNotMakeAnUntrustedServerTrusted() async throws {
        let unknown = try Self.environment("COURIER_TLS_UNKNOWN_URL")
        let pin = try TLSOptions.PublicKeyPin(publicKeyOf: try TLSOptions.Certificate(contentsOf: try Self.file("unknown.pem")))
        let tls = TLSOptions(trust: .only([try Self.authority()]), pinnedKeys: [pin])
        let error = await #expect(throws: CourierError.self) {
            try await Self.withExecutor(tls) { _ = try await $0.send(.get |> url(unknown + "/get")) }
        }
        #expect(Self.problem(error) == .unknownIssuer, "\(String(describing: error))")
    }

    /// A pin on the intermediate's or the root's key holds for a server whose chain goes through
    /// them (OkHttp's `CertificatePinner` allows the same): checked on the chain the TLS library
    /// verified.
    @Test func aPinOnAnIntermediateOrRootKeyHoldsForTheChainThroughIt() async throws {
        let chained = try Self.environment("COURIER_TLS_CHAINED_URL")
        let root = try TLSOptions.Certificate(contentsOf: try Self.file("chain-root.pem"))
        for stem in ["spki-intermediate.txt", "spki-chain-root.txt"] {
            let pin = try TLSOptions.PublicKeyPin(base64: try String(contentsOf: try Self.file(stem), encoding: .utf8))
            let status = try await Self.withExecutor(TLSOptions(trust: .only([root]), pinnedKeys: [pin])) {
                try await $0.send(.get |> url(chained + "/get")).status
            }
            #expect(status == 200, "\(stem)")
        }
        // The leaf's own key, as before.
        let leaf = try TLSOptions.PublicKeyPin(base64: try String(contentsOf: try Self.file("spki-chained.txt"), encoding: .utf8))
        let status = try await Self.withExecutor(TLSOptions(trust: .only([root]), pinnedKeys: [leaf])) {
            try await $0.send(.get |> url(chained + "/get")).status
        }
        #expect(status == 200)
    }

    /// A certificate the server presents beside its chain proves nothing: a pin on its key does
    /// not match (an attacker can append any public certificate), and the request is not sent.
    @Test func aPinnedKeyTheServerOnlyPresentsDoesNotMatch() async throws {
        let smuggled = try Self.environment("COURIER_TLS_SMUGGLED_URL")
        let root = try TLSOptions.Certificate(contentsOf: try Self.file("chain-root.pem"))
        let appended = try TLSOptions.PublicKeyPin(base64: try String(contentsOf: try Self.file("spki-other-ca.txt"), encoding: .utf8))
        let error = await #expect(throws: CourierError.self) {
            try await Self.withExecutor(TLSOptions(trust: .only([root]), pinnedKeys: [appended])) {
                _ = try await $0.send(.post |> url(smuggled + "/post") |> bearer("PINNED-SECRET"))
            }
        }
        #expect(Self.problem(error) == .pinMismatch, "\(String(describing: error))")
        #expect(try await Self.seen()["smuggled"] == 0, "the server read a request")
        // The same server, pinned on its intermediate: it answers (the chain itself is fine).
        let intermediate = try TLSOptions.PublicKeyPin(base64: try String(contentsOf: try Self.file("spki-intermediate.txt"), encoding: .utf8))
        let status = try await Self.withExecutor(TLSOptions(trust: .only([root]), pinnedKeys: [intermediate])) {
            try await $0.send(.get |> url(smuggled + "/get")).status
        }
        #expect(status == 200)
    }

    /// The transports that cannot check a pin refuse the options instead of ignoring them.
    @Test func transportsThatCannotPinRefuseThePins() throws {
        let pin = try TLSOptions.PublicKeyPin(base64: try String(contentsOf: try Self.file("spki.txt"), encoding: .utf8))
        #expect(throws: TLSOptions.Unsupported.self) { try URLSessionTransport.check(TLSOptions(pinnedKeys: [pin])) }
        #expect("\(TLSOptions(pinnedKeys: [pin]))".contains("1 pinned key"))
    }
}
