#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension Response {
    /// The framing check the ``Exchange`` makes, once for every transport, before it calls a body
    /// complete: a failure when the body that arrived is shorter or longer than the response's
    /// `Content-Length` says, so a connection cut mid-body never looks like a complete answer
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
        let count = bodyCount ?? body.count
        guard let expected = framedLength(answering: method), expected != count else { return nil }
        return Self.framingFailure(expected: expected, received: count)
    }

    /// The check, for a method as Foundation gives it.
    func framingFailure(method: String?, bodyCount: Int? = nil) -> TransportFailure? {
        framingFailure(method: method.map { HTTPMethod(rawValue: $0.uppercased()) }, bodyCount: bodyCount)
    }

    /// The length the framing rule holds this response's body to: its `Content-Length` when the
    /// body is identity-coded and is the answer's own (not to a `HEAD`, not a `1xx`, `204` or
    /// `3xx`) and no transfer coding frames it instead (RFC 9112 §6.3: `Transfer-Encoding`
    /// overrides `Content-Length`); `nil` when the rule does not check it.
    /// - Parameter method: The method that was sent.
    func framedLength(answering method: HTTPMethod?) -> Int? {
        guard status >= 200, status != 204, !(300..<400).contains(status), method != .head,
            let expected = declaredContentLength, firstValue(of: .transferEncoding) == nil
        else { return nil }
        if let coding = firstValue(of: .contentEncoding) {
            let trimmed = HTTPSyntax.asciiLowercased(HTTPSyntax.trimmed(coding))
            guard trimmed.isEmpty || trimmed == "identity" else { return nil }
        }
        return expected
    }

    /// The failure for a body of `received` bytes announced as `expected`.
    static func framingFailure(expected: Int, received: Int) -> TransportFailure {
        TransportFailure(.truncatedBody, message: "the body has \(received) bytes but Content-Length announced \(expected)")
    }
}
