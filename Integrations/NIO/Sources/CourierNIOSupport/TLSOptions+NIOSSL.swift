import CourierCore
import NIOSSL

extension TLSOptions {
    /// These options as SwiftNIO SSL's client configuration: the authorities ``trust`` names
    /// and the client certificate of ``clientIdentity``, with full verification (chain and host
    /// name) always: Courier never turns it off.
    /// - Parameter protocols: The application protocols offered by ALPN, most preferred first.
    /// - Returns: The configuration.
    /// - Throws: ``TLSOptions/Invalid`` when SwiftNIO SSL cannot read a certificate or the key (the
    ///   reason never holds key material).
    @_spi(NIOTransports) public func nioConfiguration(protocols: [String]) throws(TLSOptions.Invalid) -> TLSConfiguration {
        var settings = TLSConfiguration.makeClientConfiguration()
        settings.applicationProtocols = protocols
        try apply(to: &settings)
        return settings
    }

    /// Sets the trust and client identity of `settings` from these options, and full
    /// verification (shared with Courier's AsyncHTTPClient transport, SPI `NIOTransports`).
    /// - Throws: ``TLSOptions/Invalid`` when SwiftNIO SSL cannot read a certificate or the key.
    @_spi(NIOTransports) public func apply(to settings: inout TLSConfiguration) throws(TLSOptions.Invalid) {
        settings.certificateVerification = .fullVerification
        switch trust {
        case .system:
            break
        case .systemAnd(let extra):
            settings.additionalTrustRoots.append(.certificates(try Self.nioCertificates(extra)))
        case .only(let roots):
            settings.trustRoots = .certificates(try Self.nioCertificates(roots))
            settings.additionalTrustRoots = []
        }
        if let clientIdentity {
            settings.certificateChain = try Self.nioCertificates(clientIdentity.certificateChain).map { .certificate($0) }
            do {
                settings.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: Array(clientIdentity.privateKeyPEM.utf8), format: .pem))
            } catch {
                throw TLSOptions.Invalid(reason: "SwiftNIO SSL cannot read the client's private key (an unencrypted PEM key is expected)")
            }
        }
    }

    private static func nioCertificates(_ certificates: [TLSOptions.Certificate]) throws(TLSOptions.Invalid) -> [NIOSSLCertificate] {
        var read: [NIOSSLCertificate] = []
        for (index, certificate) in certificates.enumerated() {
            do {
                read.append(try NIOSSLCertificate(bytes: Array(certificate.pem.utf8), format: .pem))
            } catch {
                throw TLSOptions.Invalid(reason: "SwiftNIO SSL cannot read certificate \(index + 1) of \(certificates.count)")
            }
        }
        return read
    }
}
