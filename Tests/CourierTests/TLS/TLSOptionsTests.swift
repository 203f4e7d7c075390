import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Whom to trust and who the client is: PEM read strictly, the private key never printed, and
/// options a transport cannot honour refused when the executor is made.
@Suite("TLS options")
struct TLSOptionsTests {
    /// PEM-shaped text (the parser checks framing and base64; SwiftNIO SSL reads the DER itself).
    private static func pem(_ label: String, _ body: String) -> String {
        "-----BEGIN \(label)-----\n\(Data(body.utf8).base64EncodedString())\n-----END \(label)-----\n"
    }

    private static let key = pem("PRIVATE KEY", "TOP-SECRET-KEY-MATERIAL")

    @Test func aBundleIsReadInOrderAndOneCertificateMustBeOne() throws {
        let bundle = Self.pem("CERTIFICATE", "first") + "junk between\n" + Self.pem("CERTIFICATE", "second")
        let read = try TLSOptions.Certificate.certificates(pem: bundle)
        #expect(read.count == 2)
        #expect(read[0].pem.contains(Data("first".utf8).base64EncodedString()))
        #expect(throws: TLSOptions.Invalid.self) { try TLSOptions.Certificate(pem: bundle) }
        #expect(try TLSOptions.Certificate(pem: Self.pem("CERTIFICATE", "one")).pem.hasPrefix("-----BEGIN CERTIFICATE-----"))
    }

    @Test(arguments: [
        "", "no PEM here", "-----BEGIN CERTIFICATE-----\nAAAA\n", "-----BEGIN CERTIFICATE-----\n%%%\n-----END CERTIFICATE-----",
        "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----",
    ])
    func textThatIsNotACertificateIsRefused(text: String) {
        #expect(throws: TLSOptions.Invalid.self) { try TLSOptions.Certificate.certificates(pem: text) }
    }

    @Test func anIdentityNeedsACertificateAndAPEMKey() throws {
        let certificate = try TLSOptions.Certificate(pem: Self.pem("CERTIFICATE", "client"))
        #expect(throws: TLSOptions.Invalid.self) { try TLSOptions.ClientIdentity(certificateChain: [], privateKeyPEM: Self.key) }
        #expect(throws: TLSOptions.Invalid.self) { try TLSOptions.ClientIdentity(certificateChain: [certificate], privateKeyPEM: "secret") }
        let missing = URL(fileURLWithPath: "/nonexistent/courier-client.pem")
        let error = #expect(throws: TLSOptions.Invalid.self) { try TLSOptions.ClientIdentity(certificateFile: missing, privateKeyFile: missing) }
        #expect(error?.reason.contains("courier-client.pem") == true)
    }

    /// Every way a value can be printed.
    @Test func thePrivateKeyNeverShows() throws {
        let certificate = try TLSOptions.Certificate(pem: Self.pem("CERTIFICATE", "client"))
        let identity = try TLSOptions.ClientIdentity(certificateChain: [certificate], privateKeyPEM: Self.key)
        let options = TLSOptions(trust: .only([certificate]), clientIdentity: identity)
        let secret = Data("TOP-SECRET-KEY-MATERIAL".utf8).base64EncodedString()
        var dumped = ""
        dump(options, to: &dumped)
        dump(identity, to: &dumped)
        let printed = ["\(options)", String(reflecting: options), "\(identity)", String(reflecting: identity), dumped,
            "\(Mirror(reflecting: identity).children.map { "\($0.value)" })"]
        for text in printed { #expect(!text.contains(secret), "\(text)") }
        #expect("\(options)".contains("only 1 root(s)"))
        #expect("\(identity)".contains("private key hidden"))
    }

    @Test func theSystemsRootsWithoutAClientCertificatePassEverywhere() throws {
        try URLSessionTransport.check(.system)
        _ = try URLSessionExecutor(configuration: .ephemeral, tls: .system)
    }

    /// What URLSession cannot do is refused when the executor is made, never quietly dropped.
    @Test func optionsURLSessionCannotHonourAreRefusedAtConstruction() throws {
        let authority = try TLSOptions.Certificate(pem: Self.pem("CERTIFICATE", "company CA"))
        let identity = try TLSOptions.ClientIdentity(certificateChain: [authority], privateKeyPEM: Self.key)
        for options in [TLSOptions(trust: .systemAnd([authority])), TLSOptions(trust: .only([authority])), TLSOptions(clientIdentity: identity)] {
            let error = #expect(throws: TLSOptions.Unsupported.self) { _ = try URLSessionExecutor(tls: options) }
            #if canImport(FoundationNetworking)
                #expect(error?.transport == "URLSession on Linux (FoundationNetworking)")
                #expect(error?.reason.contains("AsyncHTTPClientExecutor") == true)
            #endif
            #expect(!"\(String(describing: error))".contains(Data("TOP-SECRET-KEY-MATERIAL".utf8).base64EncodedString()))
        }
    }
}
