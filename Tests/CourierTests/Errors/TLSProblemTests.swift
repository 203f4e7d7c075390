import Courier
import Foundation
import Testing

@testable import CourierCore
@testable import CourierURLSession

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Every TLS failure is a typed `secureConnectionFailed` that says what failed, however the
/// transport's TLS library put it: libcurl's text (FoundationNetworking gives every certificate
/// failure the code -1), URLSession's codes on Apple platforms, BoringSSL's reason names.
@Suite("TLS problems")
struct TLSProblemTests {
    /// libcurl 7.88's and OpenSSL 3's own words, as FoundationNetworking hands them over.
    @Test(arguments: [
        ("SSL certificate problem: certificate has expired", TLSProblem.expired),
        ("SSL certificate problem: certificate is not yet valid", .notYetValid),
        ("SSL certificate problem: unable to get local issuer certificate", .unknownIssuer),
        ("SSL certificate problem: self-signed certificate", .unknownIssuer),
        ("SSL certificate problem: self-signed certificate in certificate chain", .unknownIssuer),
        ("SSL: no alternative certificate subject name matches target host name '127.0.0.1'", .hostnameMismatch),
        ("OpenSSL SSL_read: error:0A00045C:SSL routines::tlsv13 alert certificate required, errno 0", .clientCertificateRequired),
        ("OpenSSL SSL_connect: error:0A000418:SSL routines::tlsv1 alert unknown ca", .clientCertificateRefused),
        ("error:0A00010B:SSL routines::wrong version number", .handshake("wrong version number")),
    ])
    func libcurlsTextNamesTheProblem(text: String, expected: TLSProblem) {
        #expect(TLSProblem.fromOpenSSL(text) == expected)
        let error = URLError(.unknown, userInfo: [NSLocalizedDescriptionKey: text])
        let mapped = URLSessionErrors.courierError(for: error, request: Request.get |> url("https://api.test/x") |> bearer("SECRET"))
        guard case .transport(let failure) = mapped.cause else {
            Issue.record("\(mapped)")
            return
        }
        #expect(failure.kind == .secureConnectionFailed)
        #expect(failure.tlsProblem == expected)
        #expect(failure.message == expected.description)
        #expect(!mapped.isTransient)
        #expect(!"\(mapped)".contains("SECRET"))
    }

    /// A client certificate the server required used to look like a lost connection, which retry
    /// middleware retries.
    @Test func aLostConnectionThatIsARequiredClientCertificateIsNotTransient() {
        let text = "OpenSSL SSL_read: error:0A00045C:SSL routines::tlsv13 alert certificate required, errno 0"
        let mapped = URLSessionErrors.courierError(
            for: URLError(.networkConnectionLost, userInfo: [NSLocalizedDescriptionKey: text]), request: nil)
        guard case .transport(let failure) = mapped.cause else {
            Issue.record("\(mapped)")
            return
        }
        #expect(failure.tlsProblem == .clientCertificateRequired)
        #expect(!mapped.isTransient)
    }

    /// libcurl's words when a TLS 1.3 server refuses a client without the certificate it requires:
    /// over https not a lost connection (which retry middleware retries), over http unchanged.
    @Test func aConnectionClosedRightAfterTheHandshakeIsATLSFailureOverHTTPSOnly() {
        let text = "getpeername() failed with errno 107: Transport endpoint is not connected"
        let error = URLError(.networkConnectionLost, userInfo: [NSLocalizedDescriptionKey: text])
        let secure = URLSessionErrors.courierError(for: error, request: Request.get |> url("https://api.test/x"))
        guard case .transport(let failure) = secure.cause else {
            Issue.record("\(secure)")
            return
        }
        #expect(failure.kind == .secureConnectionFailed)
        #expect(!secure.isTransient)
        let plain = URLSessionErrors.courierError(for: error, request: Request.get |> url("http://api.test/x"))
        guard case .transport(let lost) = plain.cause else {
            Issue.record("\(plain)")
            return
        }
        #expect(lost.kind == .connectionLost)
    }

    @Test func textThatIsNotAboutTLSKeepsItsMeaning() {
        #expect(TLSProblem.fromOpenSSL("transfer closed with 60 bytes remaining to read") == nil)
        let mapped = URLSessionErrors.courierError(
            for: URLError(.networkConnectionLost, userInfo: [NSLocalizedDescriptionKey: "Recv failure: Connection reset by peer"]),
            request: nil)
        guard case .transport(let failure) = mapped.cause else {
            Issue.record("\(mapped)")
            return
        }
        #expect(failure.kind == .connectionLost)
        #expect(failure.tlsProblem == nil)
    }

    @Test(arguments: [
        (URLError.Code.serverCertificateHasBadDate, TLSProblem.expired), (.serverCertificateNotYetValid, .notYetValid),
        (.serverCertificateHasUnknownRoot, .unknownIssuer), (.serverCertificateUntrusted, .untrustedCertificate),
        (.clientCertificateRejected, .clientCertificateRefused), (.clientCertificateRequired, .clientCertificateRequired),
    ])
    func urlSessionsCodesNameTheProblem(code: URLError.Code, expected: TLSProblem) {
        let mapped = CourierError.wrapping(URLError(code), request: nil)
        guard case .transport(let failure) = mapped.cause else {
            Issue.record("\(mapped)")
            return
        }
        #expect(failure.kind == .secureConnectionFailed)
        #expect(failure.tlsProblem == expected)
        #expect(failure.code == code.rawValue)
    }

    @Test(arguments: [
        ("CERTIFICATE_VERIFY_FAILED", TLSProblem.untrustedCertificate),
        ("TLSV1_ALERT_CERTIFICATE_REQUIRED", .clientCertificateRequired), ("TLSV1_ALERT_UNKNOWN_CA", .clientCertificateRefused),
        ("SSLV3_ALERT_BAD_CERTIFICATE", .clientCertificateRefused), ("WRONG_VERSION_NUMBER", .handshake("WRONG_VERSION_NUMBER")),
    ])
    func boringSSLsReasonsNameTheProblem(reason: String, expected: TLSProblem) {
        #expect(TLSProblem.fromBoringSSL(reason: reason) == expected)
    }

    /// A reason is the library's fixed name: never a URL or a path from the text around it.
    @Test func aHandshakeReasonCarriesNoURLOrPath() {
        let problem = TLSProblem.fromOpenSSL("SSL connect error to https://user:pw@api.test/secret?token=abc: /etc/ssl/x handshake")
        guard case .handshake(let reason)? = problem else {
            Issue.record("\(String(describing: problem))")
            return
        }
        #expect(!reason.contains("api.test") && !reason.contains("token") && !reason.contains("/etc"))
        #expect(reason.count <= 80)
    }
}
