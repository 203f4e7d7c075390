import CourierCore
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `URLError` as Courier reads it: the core, on FoundationEssentials where the toolchain has it,
/// cannot name the type, so this module (which every app that imports `Courier` links) maps it.
extension URLError: PlatformError {
    /// `timedOut` and `cancelled` as those causes; other codes as a transport failure of a
    /// platform-neutral kind (a certificate's problem as a ``CourierCore/TLSProblem``).
    package var courierCause: CourierError.Cause? {
        let code = self.code
        let kind: TransportFailure.Kind
        switch code {
        case .timedOut: return .timedOut
        case .cancelled: return .cancelled
        case .cannotFindHost, .dnsLookupFailed: kind = .dnsFailure
        case .cannotConnectToHost: kind = .cannotConnect
        case .networkConnectionLost: kind = .connectionLost
        case .notConnectedToInternet, .dataNotAllowed, .internationalRoamingOff: kind = .notConnected
        case .serverCertificateHasBadDate: return .transport(.tls(.expired, code: code.rawValue))
        case .serverCertificateNotYetValid: return .transport(.tls(.notYetValid, code: code.rawValue))
        case .serverCertificateHasUnknownRoot: return .transport(.tls(.unknownIssuer, code: code.rawValue))
        case .serverCertificateUntrusted: return .transport(.tls(.untrustedCertificate, code: code.rawValue))
        case .clientCertificateRejected: return .transport(.tls(.clientCertificateRefused, code: code.rawValue))
        case .clientCertificateRequired: return .transport(.tls(.clientCertificateRequired, code: code.rawValue))
        case .secureConnectionFailed: kind = .secureConnectionFailed
        case .httpTooManyRedirects, .redirectToNonExistentLocation: kind = .redirectFailed
        case .badServerResponse, .cannotParseResponse, .cannotDecodeContentData, .cannotDecodeRawData,
            .zeroByteResource:
            kind = .badResponse
        default:
            kind = .other
        }
        return .transport(TransportFailure(kind, code: code.rawValue, message: "URLError \(Self.name(of: code))"))
    }

    /// Only the code: the `userInfo` holds the failing URL and libcurl's text.
    package var safeDetail: String { "(code: \(code.rawValue))" }

    /// The error with its failing URL redacted and every other `userInfo` entry dropped.
    package func redacting(with redaction: Redaction) -> (any Error)? {
        URLError(code, userInfo: FailingURLInfo.redacted(failingURL, userInfo, redaction))
    }

    private static func name(of code: URLError.Code) -> String {
        switch code {
        case .cannotFindHost: "cannotFindHost"
        case .dnsLookupFailed: "dnsLookupFailed"
        case .cannotConnectToHost: "cannotConnectToHost"
        case .networkConnectionLost: "networkConnectionLost"
        case .notConnectedToInternet: "notConnectedToInternet"
        case .secureConnectionFailed: "secureConnectionFailed"
        case .httpTooManyRedirects: "httpTooManyRedirects"
        case .badServerResponse: "badServerResponse"
        case .cannotParseResponse: "cannotParseResponse"
        case .badURL: "badURL"
        case .unsupportedURL: "unsupportedURL"
        default: "code \(code.rawValue)"
        }
    }
}

/// `NSError` as Courier reads it: one in `NSURLErrorDomain` (what FoundationNetworking's
/// delegate callbacks report) as the `URLError` it is; any other by its domain and code only,
/// with a failing URL it carries redacted.
extension NSError: PlatformError {
    package var courierCause: CourierError.Cause? {
        // Optional on Linux, not on Apple platforms.
        let urlCode: URLError.Code? = URLError.Code(rawValue: code)
        guard domain == NSURLErrorDomain, let urlCode else { return nil }
        return URLError(urlCode, userInfo: userInfo).courierCause
    }

    package var safeDetail: String { " (domain: \(domain), code: \(code))" }

    package func redacting(with redaction: Redaction) -> (any Error)? {
        let urlKeys = [NSURLErrorFailingURLErrorKey, FailingURLInfo.stringKey, NSURLErrorKey]
        guard domain == NSURLErrorDomain || urlKeys.contains(where: { userInfo[$0] != nil }) else { return nil }
        let url = userInfo[NSURLErrorFailingURLErrorKey] as? URL ?? userInfo[NSURLErrorKey] as? URL
        return NSError(domain: domain, code: code, userInfo: FailingURLInfo.redacted(url, userInfo, redaction))
    }
}

/// The failing-URL entries of an error's `userInfo`.
private enum FailingURLInfo {
    /// The key of a failing URL's string (`NSURLErrorFailingURLStringErrorKey`, named by its
    /// value because the constant is deprecated).
    static let stringKey = "NSErrorFailingURLStringKey"

    /// The failing-URL entries of `info`, redacted; every other entry (which may repeat the URL
    /// in a message or an underlying error) is dropped.
    static func redacted(_ url: URL?, _ info: [String: Any], _ redaction: Redaction) -> [String: Any] {
        let string = url.map { Request.redactedURLString($0, redaction: redaction) }
            ?? (info[stringKey] as? String).flatMap(URL.init(string:)).map { Request.redactedURLString($0, redaction: redaction) }
        guard let string else { return [:] }
        var redacted: [String: Any] = [stringKey: string]
        if let url = URL(string: string.replacingOccurrences(of: Redaction.placeholder, with: "redacted")) {
            redacted[NSURLErrorFailingURLErrorKey] = url
        }
        return redacted
    }
}
