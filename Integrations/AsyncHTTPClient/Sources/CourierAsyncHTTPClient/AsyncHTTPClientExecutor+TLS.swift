import AsyncHTTPClient
import CourierCore
import Foundation
import NIOSSL

extension AsyncHTTPClientExecutor {
    /// ``clientConfiguration(_:)`` with `tls` applied to its TLS configuration: the authorities
    /// ``/Courier/TLSOptions/trust`` names and the client certificate of ``/Courier/TLSOptions/clientIdentity``.
    /// Certificate verification stays full (chain and host name): Courier never turns it off.
    ///
    /// ```swift
    /// let tls = TLSOptions(trust: .systemAnd([try TLSOptions.Certificate(contentsOf: companyCA)]))
    /// let client = HTTPClient(eventLoopGroup: .singletonMultiThreadedEventLoopGroup,
    ///                         configuration: try AsyncHTTPClientExecutor.clientConfiguration(tls: tls))
    /// let executor = try AsyncHTTPClientExecutor(client: client)
    /// ```
    /// - Parameters:
    ///   - base: The configuration to start from.
    ///   - tls: Whom to trust and who the client is.
    /// - Returns: The configuration.
    /// - Throws: ``/Courier/TLSOptions/Invalid`` when SwiftNIO SSL cannot read a certificate or the key
    ///   (the reason never holds key material).
    public static func clientConfiguration(
        _ base: HTTPClient.Configuration = HTTPClient.Configuration(), tls: TLSOptions
    ) throws(TLSOptions.Invalid) -> HTTPClient.Configuration {
        var configuration = clientConfiguration(base)
        var settings = configuration.tlsConfiguration ?? TLSConfiguration.makeClientConfiguration()
        settings.certificateVerification = .fullVerification
        switch tls.trust {
        case .system:
            break
        case .systemAnd(let extra):
            settings.additionalTrustRoots.append(.certificates(try certificates(extra)))
        case .only(let roots):
            settings.trustRoots = .certificates(try certificates(roots))
            settings.additionalTrustRoots = []
        }
        if let identity = tls.clientIdentity {
            settings.certificateChain = try certificates(identity.certificateChain).map { .certificate($0) }
            do {
                settings.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: Array(identity.privateKeyPEM.utf8), format: .pem))
            } catch {
                throw TLSOptions.Invalid(reason: "SwiftNIO SSL cannot read the client's private key (an unencrypted PEM key is expected)")
            }
        }
        configuration.tlsConfiguration = settings
        return configuration
    }

    private static func certificates(_ certificates: [TLSOptions.Certificate]) throws(TLSOptions.Invalid) -> [NIOSSLCertificate] {
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
