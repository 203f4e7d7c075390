import CourierCore
import Foundation
import Testing

/// Pins as values: read from base64 or from a certificate's key (the DER walk checked against
/// OpenSSL's digest), refused when malformed, printed as public text; no DER can crash the walk.
@Suite("TLSOptions.PublicKeyPin")
struct PublicKeyPinTests {
    /// A self-signed P-256 certificate (CN=pin.test), and its key's digest as
    /// `openssl x509 -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64` prints it.
    static let certificate = """
        -----BEGIN CERTIFICATE-----
        MIIBejCCASGgAwIBAgIUHsv57+5TEKjQH5ezq+Odfq7Vs5swCgYIKoZIzj0EAwIw
        EzERMA8GA1UEAwwIcGluLnRlc3QwHhcNMjYxMTI3MjIxOTQ2WhcNMzYxMTI0MjIx
        OTQ2WjATMREwDwYDVQQDDAhwaW4udGVzdDBZMBMGByqGSM49AgEGCCqGSM49AwEH
        A0IABKfe3M5Pn7fw/99BvWxrCz/jhGkrpY1JKcLzpgDGxCiQQvux30+KGSLJ4pXZ
        P64/8ol4Fysuua663RAM2SdT5fKjUzBRMB0GA1UdDgQWBBTaVmmvzGc4e3PB/oBr
        rpkbh0NouTAfBgNVHSMEGDAWgBTaVmmvzGc4e3PB/oBrrpkbh0NouTAPBgNVHRMB
        Af8EBTADAQH/MAoGCCqGSM49BAMCA0cAMEQCIBUTDNhAiFJ5jUKxBptdHEaV858W
        4xjCEqs2tP85LoDBAiBFU1FTqoikX2aF0N699vqIPcMa1/y0fNeE1cDHJGHFDg==
        -----END CERTIFICATE-----
        """
    static let digest = "BwlBZJ4Zb3/HbiwmuLXW0gzjJ7EwXGYpWMl/96wqEdI="

    @Test func theKeyOfACertificateIsPinnedAsOpenSSLDigestsIt() throws {
        let pin = try TLSOptions.PublicKeyPin(publicKeyOf: try TLSOptions.Certificate(pem: Self.certificate))
        #expect(pin == (try TLSOptions.PublicKeyPin(base64: Self.digest)))
        #expect(pin.description == "sha256/" + Self.digest)
        #expect(pin.sha256.count == 32)
    }

    @Test(arguments: [digest, "sha256/" + digest, "  \(digest)\n", "\(digest)\r\n"])
    func base64IsReadInEveryFormAToolPrints(text: String) throws {
        #expect(try TLSOptions.PublicKeyPin(base64: text) == (try TLSOptions.PublicKeyPin(base64: Self.digest)))
    }

    @Test(arguments: ["", "sha256/", "c2hvcnQ=", "%%%", String(repeating: "A", count: 64), "sha1/" + digest])
    func textThatIsNotADigestIsRefused(text: String) {
        #expect(throws: TLSOptions.Invalid.self) { try TLSOptions.PublicKeyPin(base64: text) }
    }

    @Test func aDigestMustBe32Bytes() throws {
        #expect(throws: TLSOptions.Invalid.self) { try TLSOptions.PublicKeyPin(sha256: Data(count: 31)) }
        #expect(throws: TLSOptions.Invalid.self) { try TLSOptions.PublicKeyPin(sha256: Data(count: 33)) }
        #expect(try TLSOptions.PublicKeyPin(sha256: Data(count: 32)).sha256 == Data(count: 32))
    }

    /// Every cut of the certificate's DER, and every byte of it flipped, gives a pin or an
    /// `Invalid` error: never a crash, never an out-of-range read.
    @Test func noDERCrashesTheWalk() throws {
        let der = try #require(Data(base64Encoded: Self.certificate.split(separator: "\n").dropFirst().dropLast().joined()))
        func pem(_ bytes: Data) -> String {
            "-----BEGIN CERTIFICATE-----\n" + bytes.base64EncodedString() + "\n-----END CERTIFICATE-----\n"
        }
        for length in stride(from: 1, to: der.count, by: 3) {
            guard let certificate = try? TLSOptions.Certificate(pem: pem(der.prefix(length))) else { continue }
            #expect(throws: TLSOptions.Invalid.self) { try TLSOptions.PublicKeyPin(publicKeyOf: certificate) }
        }
        for index in der.indices {
            var changed = der
            changed[index] ^= 0xFF
            guard let certificate = try? TLSOptions.Certificate(pem: pem(changed)) else { continue }
            _ = try? TLSOptions.PublicKeyPin(publicKeyOf: certificate)
        }
        // Lengths of five bytes and more (over 4 GiB) are refused, not read.
        let huge = Data([0x30, 0x85, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x30, 0x00])
        #expect(throws: TLSOptions.Invalid.self) { try TLSOptions.PublicKeyPin(publicKeyOf: try TLSOptions.Certificate(pem: pem(huge))) }
    }

    @Test func optionsPrintHowManyKeysArePinnedAndEqualityCountsThem() throws {
        let pin = try TLSOptions.PublicKeyPin(base64: Self.digest)
        let pinned = TLSOptions(pinnedKeys: [pin])
        #expect(pinned.description == "TLSOptions(system roots, 1 pinned key(s))")
        #expect(pinned != TLSOptions.system)
        var same = TLSOptions()
        same.pinnedKeys.insert(pin)
        #expect(same == pinned)
    }
}
