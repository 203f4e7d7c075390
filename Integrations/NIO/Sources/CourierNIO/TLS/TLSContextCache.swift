import NIOConcurrencyHelpers
import NIOSSL

/// A TLS context made once, on first use, and shared by every connection of a transport.
final class TLSContextCache: Sendable {
    private let settings: TLSConfiguration
    private let made = NIOLockedValueBox<Result<NIOSSLContext, any Error>?>(nil)

    init(_ settings: TLSConfiguration) { self.settings = settings }

    /// The context, made now if it was not yet.
    /// - Throws: SwiftNIO SSL's failure to make it (the same one on every later call).
    func context() throws -> NIOSSLContext {
        try made.withLockedValue { made in
            if let made { return try made.get() }
            let result = Result { try NIOSSLContext(configuration: settings) }
            made = result
            return try result.get()
        }.self
    }
}

extension NIOTransport {
    /// SwiftNIO SSL's client settings for ``/Courier/TLSOptions/system``, offering what the
    /// default configuration offers.
    static var defaultTLSSettings: TLSConfiguration {
        var settings = TLSConfiguration.makeClientConfiguration()
        settings.certificateVerification = .fullVerification
        settings.applicationProtocols = Configuration().applicationProtocols
        return settings
    }
}
