import Foundation


extension CourierError: LocalizedError, CustomReflectable {
    /// The same as ``description``, so `localizedDescription` is safe to show and log too.
    public var errorDescription: String? { description }

    /// What `dump`, `Mirror` and debuggers show: the summary, the redacted request, the response
    /// with secrets hidden (see ``Response/customMirror``), and the underlying error's type and
    /// code, never its contents.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "cause": summary,
                "request": request as Any,
                "response": response as Any,
                "underlyingError": underlyingError.map(Self.safeSummary) as Any,
            ])
    }

    /// The type, domain and code of an error: enough to diagnose, nothing that can hold a secret.
    static func safeSummary(_ error: any Error) -> String {
        switch error {
        case let error as URLError: return "URLError(code: \(error.code.rawValue))"
        case let error as CourierError: return error.description
        default:
            let bridged = error as NSError
            return "\(type(of: error)) (domain: \(bridged.domain), code: \(bridged.code))"
        }
    }

    /// The `userInfo` key of a failing URL's string (`NSURLErrorFailingURLStringErrorKey`,
    /// named by its value because the constant is deprecated).
    private static let failingURLStringKey = "NSErrorFailingURLStringKey"

    /// `error` with any failing URL it carries redacted; other errors are returned unchanged.
    static func redacting(_ error: any Error, with redaction: Redaction) -> any Error {
        if let error = error as? URLError {
            return URLError(error.code, userInfo: redactedURLInfo(error.failingURL, error.userInfo, redaction))
        }
        if error is CourierError || error is DecodingError || error is CancellationError { return error }
        let bridged = error as NSError
        let urlKeys = [NSURLErrorFailingURLErrorKey, failingURLStringKey, NSURLErrorKey]
        guard bridged.domain == NSURLErrorDomain || urlKeys.contains(where: { bridged.userInfo[$0] != nil }) else {
            return error
        }
        let url = bridged.userInfo[NSURLErrorFailingURLErrorKey] as? URL ?? bridged.userInfo[NSURLErrorKey] as? URL
        return NSError(domain: bridged.domain, code: bridged.code, userInfo: redactedURLInfo(url, bridged.userInfo, redaction))
    }

    /// The failing-URL entries of a `userInfo`, redacted; every other entry (which may repeat the
    /// URL in a message or an underlying error) is dropped.
    private static func redactedURLInfo(_ url: URL?, _ info: [String: Any], _ redaction: Redaction) -> [String: Any] {
        let string = url.map { Request.redactedURLString($0, redaction: redaction) }
            ?? (info[failingURLStringKey] as? String).flatMap(URL.init(string:)).map {
                Request.redactedURLString($0, redaction: redaction)
            }
        guard let string else { return [:] }
        var redacted: [String: Any] = [failingURLStringKey: string]
        if let url = URL(string: string.replacingOccurrences(of: Redaction.placeholder, with: "redacted")) {
            redacted[NSURLErrorFailingURLErrorKey] = url
        }
        return redacted
    }
}
