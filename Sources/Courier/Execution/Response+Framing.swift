import Foundation

extension Response {
    /// The framing check every transport makes before it calls a body complete: a failure when
    /// the body that arrived is shorter or longer than the response's `Content-Length` says, so a
    /// connection cut mid-body never looks like a complete answer
    /// (``TransportFailure/Kind/truncatedBody``, which is transient: retry middleware may retry).
    ///
    /// Only identity-coded bodies are checked, whose length the transport does not change; never
    /// the body of a `HEAD`, a `204`, a `1xx` or a `3xx` (FoundationNetworking drops the body of a
    /// redirect that is handed back).
    /// - Parameters:
    ///   - method: The method that was sent (a `HEAD` has no body to count).
    ///   - bodyCount: The bytes that arrived; the body's own size by default (a stream counts
    ///     what it delivered).
    /// - Returns: The failure, or `nil` when the body is as long as announced.
    public func framingFailure(method: HTTPMethod?, bodyCount: Int? = nil) -> TransportFailure? {
        framingFailure(method: method?.rawValue, bodyCount: bodyCount)
    }

    /// The check, for a method as Foundation gives it.
    func framingFailure(method: String?, bodyCount: Int? = nil) -> TransportFailure? {
        guard method?.uppercased() != "HEAD", status != 204, status >= 200, !(300..<400).contains(status),
            let expected = declaredContentLength
        else { return nil }
        let count = bodyCount ?? body.count
        let coding = headers[.contentEncoding].map(HTTPSyntax.asciiLowercased) ?? "identity"
        guard coding.trimmingCharacters(in: .whitespaces) == "identity" || coding.isEmpty, count != expected else {
            return nil
        }
        return TransportFailure(.truncatedBody, message: "the body has \(count) bytes but Content-Length announced \(expected)")
    }
}
