import AsyncHTTPClient
import CourierCore
@_spi(NIOTransports) import CourierNIOSupport
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
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
    ///   (the reason never holds key material), or for ``/Courier/TLSOptions/pinnedKeys``, which
    ///   AsyncHTTPClient cannot check.
    public static func clientConfiguration(
        _ base: HTTPClient.Configuration = HTTPClient.Configuration(), tls: TLSOptions
    ) throws(TLSOptions.Invalid) -> HTTPClient.Configuration {
        guard tls.pinnedKeys.isEmpty else {
            // Refused rather than quietly not checked.
            throw TLSOptions.Invalid(
                reason: "AsyncHTTPClient cannot check pinned keys (its pipeline takes no verification callback); use NIOExecutor (CourierNIO)")
        }
        var configuration = clientConfiguration(base)
        var settings = configuration.tlsConfiguration ?? TLSConfiguration.makeClientConfiguration()
        try tls.apply(to: &settings)
        configuration.tlsConfiguration = settings
        return configuration
    }
}
