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
        guard let expected = declaredContentLength, method?.uppercased() != "HEAD" else { return nil }
        return Self.framingFailure(
            status: status, method: nil, contentLength: expected, contentEncoding: headers[.contentEncoding],
            bodyCount: bodyCount ?? body.count)
    }

    /// The framing check on a head's parts, for a transport that holds its own header type: the
    /// one rule ``framingFailure(method:bodyCount:)`` applies.
    /// - Parameters:
    ///   - status: The response's status.
    ///   - method: The method that was sent.
    ///   - contentLength: The declared length (``contentLength(_:)`` of the field), if any.
    ///   - contentEncoding: The `Content-Encoding` field, if any.
    ///   - bodyCount: The bytes that arrived.
    /// - Returns: The failure, or `nil` when the body is as long as announced or not checked.
    public static func framingFailure(
        status: Int, method: HTTPMethod?, contentLength: Int?, contentEncoding: String?, bodyCount: Int
    ) -> TransportFailure? {
        guard let expected = contentLength, bodyCount != expected, status != 204, status >= 200, !(300..<400).contains(status),
            method?.rawValue.uppercased() != "HEAD"
        else { return nil }
        let coding = contentEncoding.map { HTTPSyntax.asciiLowercased($0).trimmingCharacters(in: .whitespaces) } ?? "identity"
        guard coding == "identity" || coding.isEmpty else { return nil }
        return TransportFailure(.truncatedBody, message: "the body has \(bodyCount) bytes but Content-Length announced \(expected)")
    }
}
