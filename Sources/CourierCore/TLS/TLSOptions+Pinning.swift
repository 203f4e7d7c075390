#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension TLSOptions {
    /// A server public key a client accepts: the SHA-256 digest of its DER `SubjectPublicKeyInfo`,
    /// the form of HPKP's `pin-sha256` (RFC 7469 §2.4) and of OkHttp's `sha256/…` pins.
    ///
    /// Pinning is checked after the usual verification, never instead of it: the chain must
    /// still lead to a trusted authority and name the host, and then the server certificate's key
    /// must be one of ``TLSOptions/pinnedKeys``. Pin a backup key beside the live one, so that a
    /// key rotation does not lock the client out.
    ///
    /// ```swift
    /// var tls = TLSOptions()
    /// tls.pinnedKeys = [
    ///     try .init(base64: "r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E="),  // live key
    ///     try .init(base64: "YLh1dUR9y6Kja30RrAn7JKnbQG/uEtLMkBgFF2Fuihg="),  // backup key
    /// ]
    /// ```
    public struct PublicKeyPin: Sendable, Hashable, CustomStringConvertible {
        /// The 32-byte SHA-256 digest of the key's DER `SubjectPublicKeyInfo`.
        public let sha256: Data

        /// A pin from its digest.
        /// - Parameter digest: 32 bytes.
        /// - Throws: ``TLSOptions/Invalid`` for any other length.
        public init(sha256 digest: Data) throws(TLSOptions.Invalid) {
            guard digest.count == 32 else {
                throw TLSOptions.Invalid(reason: "a SHA-256 pin is 32 bytes; this one has \(digest.count)")
            }
            sha256 = digest
        }

        /// A pin from its base64 text, as `openssl … | openssl dgst -sha256 -binary | base64`
        /// prints it (surrounding white space and a final newline ignored); an OkHttp-style `sha256/`
    /// prefix is accepted.
        /// - Parameter base64: The digest in base64.
        /// - Throws: ``TLSOptions/Invalid`` for text that is not base64 of 32 bytes.
        public init(base64: String) throws(TLSOptions.Invalid) {
            var text = base64.trimmingWhitespace()
            if text.hasPrefix("sha256/") { text.removeFirst("sha256/".count) }
            guard let digest = Data(base64Encoded: text) else {
                throw TLSOptions.Invalid(reason: "a pin is the base64 of a SHA-256 digest; this text is not base64")
            }
            try self.init(sha256: digest)
        }

        /// The pin of the key `certificate` holds.
        /// - Parameter certificate: A certificate (the server's, or a backup made for it).
        /// - Throws: ``TLSOptions/Invalid`` when the certificate is not DER X.509 as expected.
        public init(publicKeyOf certificate: Certificate) throws(TLSOptions.Invalid) {
            guard let info = certificate.subjectPublicKeyInfo() else {
                throw TLSOptions.Invalid(reason: "the certificate's public key could not be read (not an X.509 certificate)")
            }
            try self.init(sha256: Data(SHA256.hash(info)))
        }

        /// Whether `subjectPublicKeyInfo` (DER) is the pinned key.
        /// - Parameter subjectPublicKeyInfo: A key's DER `SubjectPublicKeyInfo`.
        /// - Returns: `true` when its SHA-256 digest is this pin.
        public func matches(subjectPublicKeyInfo: some DataProtocol) -> Bool {
            SHA256.hash(subjectPublicKeyInfo).elementsEqual(sha256)
        }

        /// `sha256/` and the digest in base64: public, as a pin is.
        public var description: String { "sha256/" + sha256.base64EncodedString() }
    }
}

extension TLSOptions.Certificate {
    /// The certificate's DER bytes, from its PEM body.
    var der: Data? {
        guard let start = pem.firstRange(of: "-----BEGIN CERTIFICATE-----"),
            let end = pem[start.upperBound...].firstRange(of: "-----END CERTIFICATE-----")
        else { return nil }
        return Data(base64Encoded: String(pem[start.upperBound..<end.lowerBound].filter { !$0.isWhitespace }))
    }

    /// The DER `SubjectPublicKeyInfo` of the certificate (RFC 5280 §4.1: the seventh field of
    /// `tbsCertificate` when a version is given, the sixth otherwise), or `nil` when the bytes are
    /// not such a certificate.
    func subjectPublicKeyInfo() -> Data? {
        guard let der else { return nil }
        var reader = DERReader(der[...])
        guard let certificate = reader.next(), certificate.tag == 0x30 else { return nil }
        var fields = DERReader(certificate.content)
        guard let tbs = fields.next(), tbs.tag == 0x30 else { return nil }
        var parts = DERReader(tbs.content)
        guard var field = parts.next() else { return nil }
        // [0] EXPLICIT version, when present.
        if field.tag == 0xA0 {
            guard let next = parts.next() else { return nil }
            field = next
        }
        // serialNumber (just read), signature, issuer, validity, subject, then the key.
        for _ in 0..<4 {
            guard parts.next() != nil else { return nil }
        }
        guard let info = parts.next(), info.tag == 0x30 else { return nil }
        return Data(info.whole)
    }
}

/// Reads DER's tag-length-value elements one after another (definite lengths only, as DER has).
struct DERReader {
    struct Element {
        var tag: UInt8
        /// The value's bytes.
        var content: Data.SubSequence
        /// Tag, length and value.
        var whole: Data.SubSequence
    }

    private var rest: Data.SubSequence

    init(_ bytes: Data.SubSequence) { rest = bytes }

    /// The next element, or `nil` at the end or at bytes that are not DER.
    mutating func next() -> Element? {
        let start = rest.startIndex
        guard rest.count >= 2 else { return nil }
        let tag = rest[start]
        var index = start + 1
        var length = Int(rest[index])
        index += 1
        if length & 0x80 != 0 {
            let count = length & 0x7F
            // At most four length bytes: no certificate field is 4 GiB.
            guard (1...4).contains(count), rest.endIndex - index >= count else { return nil }
            length = 0
            for byte in rest[index..<(index + count)] { length = length << 8 | Int(byte) }
            index += count
        }
        guard rest.endIndex - index >= length else { return nil }
        let element = Element(tag: tag, content: rest[index..<(index + length)], whole: rest[start..<(index + length)])
        rest = rest[(index + length)...]
        return element
    }
}
