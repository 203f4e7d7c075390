#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What failed when a TLS connection could not be made: the finer cause of a
/// ``TransportFailure/Kind/secureConnectionFailed`` failure, read from whatever the transport's
/// TLS library reports (libcurl's text on Linux, URLSession's codes on Apple platforms, BoringSSL's
/// reasons on AsyncHTTPClient) and worded once, here, for every transport.
///
/// None of these is transient: retrying the same request meets the same certificate. No request
/// byte was sent in any of them (the request goes out only over a connection whose handshake
/// succeeded).
///
/// ```swift
/// catch let error as CourierError {
///     if case .transport(let failure) = error.cause, failure.tlsProblem == .expired { … }
/// }
/// ```
#if hasAttribute(nonexhaustive)
    @nonexhaustive
#endif
public enum TLSProblem: Sendable, Hashable, CustomStringConvertible {
    /// The server's certificate chains to no authority this client trusts (self-signed, or
    /// issued by a private authority that was not added).
    case unknownIssuer
    /// The server's certificate has expired.
    case expired
    /// The server's certificate is not valid yet.
    case notYetValid
    /// The server's certificate is valid, but not for the host name the request names.
    case hostnameMismatch
    /// The server's certificate was not accepted, and the TLS library does not say whether it
    /// expired, is not yet valid or comes from an unknown issuer (BoringSSL, under AsyncHTTPClient).
    case untrustedCertificate
    /// The server asked for a client certificate and refused the connection without one.
    case clientCertificateRequired
    /// The server refused the client certificate it was shown.
    case clientCertificateRefused
    /// The server's public key matches none of the pinned keys.
    case pinMismatch
    /// The handshake failed for another reason: the TLS library's name for it (for example
    /// `WRONG_VERSION_NUMBER` for a server that does not speak TLS, or a protocol alert).
    case handshake(String)

    /// One sentence that says what failed; never a secret (reasons are the TLS library's fixed
    /// names, never a certificate's contents).
    public var description: String {
        switch self {
        case .unknownIssuer:
            "the server's certificate was issued by an authority this client does not trust (unknown issuer)"
        case .expired: "the server's certificate has expired"
        case .notYetValid: "the server's certificate is not valid yet"
        case .hostnameMismatch: "the server's certificate is not valid for this host name"
        case .untrustedCertificate:
            "the server's certificate was not accepted: it expired, is not valid yet, or comes from an unknown issuer "
                + "(the TLS library does not say which)"
        case .clientCertificateRequired: "the server requires a client certificate and refused the connection without one"
        case .clientCertificateRefused: "the server refused the client certificate"
        case .pinMismatch: "the server's public key matches none of the pinned keys"
        case .handshake(let reason): "the TLS handshake failed (\(reason))"
        }
    }

    /// The problem libcurl or OpenSSL names in `text` (FoundationNetworking's messages, for one),
    /// or `nil` when the text is not about TLS.
    ///
    /// Reads the fixed phrases of OpenSSL's verification results and alerts ("certificate has
    /// expired", "unable to get local issuer certificate", "alert certificate required", …) and
    /// libcurl's host name check; any other text that names SSL becomes
    /// ``handshake(_:)`` with a reason of at most 80 characters from it, without a URL.
    /// - Parameter text: A TLS library's message.
    /// - Returns: The problem, or `nil`.
    public static func fromOpenSSL(_ text: String) -> TLSProblem? {
        let lower = text.lowercased()
        if lower.contains("certificate has expired") { return .expired }
        if lower.contains("certificate is not yet valid") { return .notYetValid }
        if lower.contains("unable to get local issuer certificate") || lower.contains("unable to get issuer certificate")
            || lower.contains("self-signed certificate") || lower.contains("self signed certificate")
            || lower.contains("unable to verify the first certificate") || lower.contains("certificate chain too long")
        {
            return .unknownIssuer
        }
        if lower.contains("subject name matches target host") || lower.contains("does not match target host")
            || lower.contains("no alternative certificate subject name")
        {
            return .hostnameMismatch
        }
        if lower.contains("alert certificate required") || lower.contains("alert_certificate_required") {
            return .clientCertificateRequired
        }
        if lower.contains("alert bad certificate") || lower.contains("alert unknown ca") || lower.contains("alert certificate unknown")
            || lower.contains("alert_bad_certificate") || lower.contains("alert_unknown_ca")
        {
            return .clientCertificateRefused
        }
        guard lower.contains("ssl") || lower.contains("tls") else { return nil }
        return .handshake(reason(in: text))
    }

    /// BoringSSL's reason name (`CERTIFICATE_VERIFY_FAILED`, `TLSV1_ALERT_CERTIFICATE_REQUIRED`, …)
    /// as a problem.
    /// - Parameter reason: The upper-case name after `SSL routines:OPENSSL_internal:`.
    /// - Returns: The problem.
    public static func fromBoringSSL(reason: String) -> TLSProblem {
        switch reason {
        case "CERTIFICATE_VERIFY_FAILED": .untrustedCertificate
        case "TLSV1_ALERT_CERTIFICATE_REQUIRED": .clientCertificateRequired
        case "SSLV3_ALERT_BAD_CERTIFICATE", "TLSV1_ALERT_UNKNOWN_CA", "SSLV3_ALERT_CERTIFICATE_UNKNOWN":
            .clientCertificateRefused
        default: .handshake(String(reason.prefix(80)))
        }
    }

    /// A short reason from a library's text: after its last `: `, without anything that looks
    /// like a URL, at most 80 characters.
    private static func reason(in text: String) -> String {
        let tail = text.split(separator: ":", omittingEmptySubsequences: true).last.map(String.init) ?? text
        let words = tail.split(separator: " ").filter { !$0.contains("://") && !$0.contains("/") }
        let reason = words.joined(separator: " ").trimmingWhitespace()
        return String((reason.isEmpty ? "TLS error" : reason).prefix(80))
    }
}
