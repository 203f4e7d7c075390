#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif


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
        case let error as CourierError: error.description
        default: "\(type(of: error))" + ((error as? any PlatformError)?.safeDetail ?? "")
        }
    }

    /// `error` with any failing URL it carries redacted; other errors are returned unchanged.
    static func redacting(_ error: any Error, with redaction: Redaction) -> any Error {
        if error is CourierError || error is DecodingError || error is CancellationError { return error }
        return (error as? any PlatformError)?.redacting(with: redaction) ?? error
    }
}
