#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Whom a client trusts and who it is, for every TLS connection an executor makes: the
/// certificate authorities that may vouch for a server, and the certificate the client presents
/// to a server that asks for one (mutual TLS).
///
/// Courier never turns certificate verification off: there is no option for it. What each
/// transport can do differs, and a combination one cannot honour is a ``TLSOptions/Unsupported``
/// error when the executor is made, never a silent downgrade:
///
/// | | system roots | extra or replacement roots | client certificate | pinned keys |
/// | --- | --- | --- | --- | --- |
/// | CourierNIO (Courier's own transport) | yes | yes | yes | yes |
/// | AsyncHTTPClient | yes | yes | yes | no |
/// | URLSession on Linux (FoundationNetworking) | yes | no: libcurl reads the system's bundle only | no | no |
/// | URLSession on Apple platforms | yes | not yet | not yet | not yet |
///
/// ```swift
/// let tls = try TLSOptions(
///     trust: .systemAnd([TLSOptions.Certificate(contentsOf: caFile)]),
///     clientIdentity: TLSOptions.ClientIdentity(certificateChain: [clientCertificate], privateKeyPEM: keyPEM))
/// let configuration = try AsyncHTTPClientExecutor.clientConfiguration(tls: tls)
/// ```
public struct TLSOptions: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
    /// Which certificate authorities vouch for a server.
    public enum Trust: Sendable, Hashable {
        /// The platform's trust store (the default).
        case system
        /// The platform's trust store and these authorities (a company's private CA).
        case systemAnd([Certificate])
        /// These authorities only: the platform's store is not consulted.
        case only([Certificate])
    }

    /// One X.509 certificate, as a PEM document (`-----BEGIN CERTIFICATE-----` …).
    public struct Certificate: Sendable, Hashable, CustomStringConvertible {
        /// The PEM document: one certificate.
        public let pem: String

        /// Reads one PEM certificate.
        /// - Parameter pem: The PEM text.
        /// - Throws: ``TLSOptions/Invalid`` when the text holds no certificate, or more than one
        ///   (use ``certificates(pem:)`` for a bundle).
        public init(pem: String) throws(TLSOptions.Invalid) {
            let found = try Self.certificates(pem: pem)
            guard found.count == 1, let only = found.first else {
                throw TLSOptions.Invalid(reason: "the PEM text holds \(found.count) certificates; one was expected")
            }
            self = only
        }

        private init(block: String) { pem = block }

        /// Reads one PEM certificate from a file.
        /// - Parameter file: A file URL.
        /// - Throws: ``TLSOptions/Invalid`` when the file cannot be read or holds no single certificate.
        public init(contentsOf file: URL) throws(TLSOptions.Invalid) {
            guard let data = try? Data(contentsOf: file), let text = String(data: data, encoding: .utf8) else {
                throw TLSOptions.Invalid(reason: "the certificate file \(file.lastPathComponent.debugDescription) cannot be read as text")
            }
            try self.init(pem: text)
        }

        /// Every certificate in a PEM bundle, in order.
        /// - Parameter pem: PEM text with one or more certificates.
        /// - Returns: The certificates.
        /// - Throws: ``TLSOptions/Invalid`` when there is none, or a block is cut short.
        public static func certificates(pem: String) throws(TLSOptions.Invalid) -> [Certificate] {
            let begin = "-----BEGIN CERTIFICATE-----"
            let end = "-----END CERTIFICATE-----"
            var found: [Certificate] = []
            var rest = pem[...]
            while let start = rest.firstRange(of: begin) {
                guard let stop = rest[start.upperBound...].firstRange(of: end) else {
                    throw TLSOptions.Invalid(reason: "a PEM certificate has no END line")
                }
                let body = rest[start.upperBound..<stop.lowerBound].filter { !$0.isWhitespace }
                guard !body.isEmpty, Data(base64Encoded: String(body)) != nil else {
                    throw TLSOptions.Invalid(reason: "a PEM certificate's body is not base64")
                }
                found.append(Certificate(block: String(rest[start.lowerBound..<stop.upperBound])))
                rest = rest[stop.upperBound...]
            }
            guard !found.isEmpty else { throw TLSOptions.Invalid(reason: "no PEM certificate (-----BEGIN CERTIFICATE-----) found") }
            return found
        }

        /// A certificate's description says only that it is one: the PEM is public, but long.
        public var description: String { "Certificate(PEM, \(pem.utf8.count) bytes)" }
    }

    /// The certificate a client presents and its private key. The key is a secret: no
    /// description, dump or mirror shows it.
    public struct ClientIdentity: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
        /// The client's certificate first, then any intermediates.
        public let certificateChain: [Certificate]
        /// The private key, as a PEM document (PKCS#8 or the algorithm's own form, unencrypted).
        public let privateKeyPEM: String

        /// Creates an identity.
        /// - Parameters:
        ///   - certificateChain: The client's certificate, then intermediates.
        ///   - privateKeyPEM: The key, PEM.
        /// - Throws: ``TLSOptions/Invalid`` for an empty chain or text that holds no PEM private key.
        public init(certificateChain: [Certificate], privateKeyPEM: String) throws(TLSOptions.Invalid) {
            guard !certificateChain.isEmpty else { throw TLSOptions.Invalid(reason: "a client identity needs its certificate") }
            guard privateKeyPEM.contains("-----BEGIN"), privateKeyPEM.contains("PRIVATE KEY-----") else {
                throw TLSOptions.Invalid(reason: "the private key is not a PEM private key (-----BEGIN … PRIVATE KEY-----)")
            }
            self.certificateChain = certificateChain
            self.privateKeyPEM = privateKeyPEM
        }

        /// Reads an identity from a PEM certificate file (the chain) and a PEM key file.
        public init(certificateFile: URL, privateKeyFile: URL) throws(TLSOptions.Invalid) {
            guard let chain = try? String(contentsOf: certificateFile, encoding: .utf8) else {
                throw TLSOptions.Invalid(reason: "the certificate file \(certificateFile.lastPathComponent.debugDescription) cannot be read")
            }
            guard let key = try? String(contentsOf: privateKeyFile, encoding: .utf8) else {
                throw TLSOptions.Invalid(reason: "the key file \(privateKeyFile.lastPathComponent.debugDescription) cannot be read")
            }
            try self.init(certificateChain: try Certificate.certificates(pem: chain), privateKeyPEM: key)
        }

        /// Names the chain's length; never the key.
        public var description: String { "ClientIdentity(\(certificateChain.count) certificate(s), private key hidden)" }
        /// No children: the key never shows in `dump` or a debugger.
        public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
    }

    /// Which certificate authorities vouch for a server.
    public var trust: Trust
    /// The certificate the client presents when a server asks, or `nil`.
    public var clientIdentity: ClientIdentity?
    /// The public keys accepted, checked after the usual verification; empty (the default) pins
    /// nothing. A key matches when it is on the chain the TLS library verified: the server's own,
    /// an intermediate's or the trust anchor's (never a certificate the server only presents
    /// beside its chain). A server with none of them fails with ``TLSProblem/pinMismatch``
    /// before any byte of the request is sent.
    public var pinnedKeys: Set<PublicKeyPin> = []

    /// Creates options.
    /// - Parameters:
    ///   - trust: Which authorities vouch for a server; the system's by default.
    ///   - clientIdentity: The certificate to present, or `nil`.
    public init(trust: Trust = .system, clientIdentity: ClientIdentity? = nil) {
        self.trust = trust
        self.clientIdentity = clientIdentity
    }

    /// Creates options that pin the server's public key.
    /// - Parameters:
    ///   - trust: Which authorities vouch for a server; the system's by default.
    ///   - clientIdentity: The certificate to present, or `nil`.
    ///   - pinnedKeys: The server public keys accepted (see ``PublicKeyPin``).
    public init(trust: Trust = .system, clientIdentity: ClientIdentity? = nil, pinnedKeys: Set<PublicKeyPin>) {
        self.init(trust: trust, clientIdentity: clientIdentity)
        self.pinnedKeys = pinnedKeys
    }

    /// The system's trust store, no client certificate.
    public static let system = TLSOptions()

    /// What these options ask for; never the private key.
    public var description: String {
        let trusted: String
        switch trust {
        case .system: trusted = "system roots"
        case .systemAnd(let extra): trusted = "system roots and \(extra.count) more"
        case .only(let roots): trusted = "only \(roots.count) root(s)"
        }
        let pins = pinnedKeys.isEmpty ? "" : ", \(pinnedKeys.count) pinned key(s)"
        return "TLSOptions(\(trusted)" + (clientIdentity.map { ", \($0)" } ?? "") + pins + ")"
    }

    /// The description only: the key never shows in `dump` or a debugger.
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }

    /// A certificate or key that cannot be used, and why.
    public struct Invalid: Error, Sendable, Hashable, CustomStringConvertible {
        /// What is wrong; never key material.
        public var reason: String
        /// Creates the error.
        public init(reason: String) { self.reason = reason }
        public var description: String { "invalid TLS options: \(reason)" }
    }

    /// Options a transport cannot honour on this platform, refused when the executor is made.
    public struct Unsupported: Error, Sendable, Hashable, CustomStringConvertible {
        /// The transport and platform, for example "URLSession on Linux".
        public var transport: String
        /// What it cannot do, and what to use instead.
        public var reason: String
        /// Creates the error.
        public init(transport: String, reason: String) {
            self.transport = transport
            self.reason = reason
        }
        public var description: String { "\(transport) cannot honour these TLS options: \(reason)" }
    }
}
