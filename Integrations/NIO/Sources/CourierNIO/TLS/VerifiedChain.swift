import CourierCore
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
import NIOCore
import NIOSSL

/// The public keys of the certificate chain BoringSSL verified for one TLS connection (the
/// server's certificate, the intermediates it was verified through, the trust anchor), as their
/// `SubjectPublicKeyInfo` bytes: what a pin on an intermediate or root key is checked against
/// (OkHttp's `CertificatePinner` does the same with its cleaned chain). Never the chain the server
/// presented: anyone can append a certificate whose key is pinned to what they present, but only
/// the chain verified up to a trusted root proves anything.
///
/// Filled on the connection's event loop while the handshake runs, read there when it is over
/// (`@unchecked Sendable` is sound: only that loop touches it).
final class VerifiedChain: @unchecked Sendable {
    /// The verified certificates' keys, in the order BoringSSL checked them.
    private(set) var keys: [[UInt8]] = []
    /// Why the first certificate BoringSSL refused was refused, read from the certificate: it
    /// expired, is not valid yet, or (its dates being fine) chains to no trusted authority.
    /// BoringSSL's handshake error says only `CERTIFICATE_VERIFY_FAILED`; this tells them apart.
    private(set) var refusal: TLSProblem?

    /// A client handler for `context` whose verification reports each certificate of the chain
    /// BoringSSL verifies to this record. Verification itself is unchanged: every certificate's
    /// own verdict is returned as BoringSSL gave it.
    func clientHandler(context: NIOSSLContext, serverHostname: String?) throws -> NIOSSLClientHandler {
        // SwiftNIO SSL's only way to see BoringSSL's verified chain without taking verification
        // over is its verification-callback initializer, deprecated in favour of callbacks that
        // replace verification; called through a protocol so that its deprecation is said once, here.
        try (ObservingHandler.self as any ChainObservingHandler.Type).make(context: context, serverHostname: serverHostname, chain: self)
    }

    /// BoringSSL checked `certificate` with `verdict`.
    fileprivate func checked(_ certificate: NIOSSLCertificate, verdict: NIOSSLVerificationResult) {
        guard verdict == .certificateVerified else {
            if refusal == nil { refusal = Self.problem(refusing: certificate, at: time(nil)) }
            return
        }
        guard let key = try? certificate.extractPublicKey().toSPKIBytes() else { return }
        keys.append(key)
    }

    /// Why a certificate BoringSSL refused at `now` was refused: its validity dates when they
    /// exclude `now`, an unknown issuer otherwise (the host name is checked after the chain,
    /// by SwiftNIO SSL, and fails on its own).
    static func problem(refusing certificate: NIOSSLCertificate, at now: time_t) -> TLSProblem {
        if now > certificate.notValidAfter { return .expired }
        if now < certificate.notValidBefore { return .notYetValid }
        return .unknownIssuer
    }
}

private protocol ChainObservingHandler {
    static func make(context: NIOSSLContext, serverHostname: String?, chain: VerifiedChain) throws -> NIOSSLClientHandler
}

private enum ObservingHandler: ChainObservingHandler {
    @available(*, deprecated, message: "SwiftNIO SSL's verification-callback initializer: the one way to see the verified chain")
    static func make(context: NIOSSLContext, serverHostname: String?, chain: VerifiedChain) throws -> NIOSSLClientHandler {
        try NIOSSLClientHandler(context: context, serverHostname: serverHostname) { verdict, certificate in
            chain.checked(certificate, verdict: verdict)
            return verdict
        }
    }
}
