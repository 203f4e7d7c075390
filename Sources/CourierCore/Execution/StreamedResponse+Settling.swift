#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension StreamedResponse {
    /// ``settled(answering:)`` when there is anything to settle. The common case costs two
    /// comparisons: a final status with a body in hand (or already observed) has nothing to settle.
    func settledIfNeeded(answering method: HTTPMethod) async throws -> StreamedResponse {
        guard status < 200 || body.isLiveAndUnobserved else { return self }
        return try await settled(answering: method)
    }

    /// Whether the framing rules say this response has no body (RFC 9112 §6.3): the answer to a
    /// `HEAD`, a 1xx, `204` or `304` status, or `Content-Length: 0` without a transfer coding.
    func hasNoBody(answering method: HTTPMethod) -> Bool {
        if method == .head || status == 204 || status == 304 || (100..<200).contains(status) { return true }
        return expectedLength == 0 && headers[.transferEncoding] == nil
    }

    /// This response as the core hands it on:
    /// - A status below 200 is never a final answer: Courier asks for no protocol switch (it
    ///   refuses `Upgrade` in a request) and transports consume informational heads, so a server
    ///   that ends the exchange with one (`101` without an upgrade, a status below 100) gets a
    ///   ``TransportFailure/Kind/badResponse``, on every transport.
    /// - A body that is complete when the head arrives (``hasNoBody(answering:)``) is complete:
    ///   a live stream of it is read to its end here (the transport ends it with the head) and
    ///   the body handed on in hand, empty. So nobody sees an empty body that was never read as
    ///   one left unread, and logging, metrics and tracing count it as what it is.
    func settled(answering method: HTTPMethod) async throws -> StreamedResponse {
        guard status >= 200 else {
            body.cancel()
            throw CourierError(.transport(TransportFailure(.badResponse, message: Self.notFinal(status))))
        }
        guard body.isLiveAndUnobserved, hasNoBody(answering: method) else { return self }
        var iterator = body.makeAsyncIterator()
        do {
            while try await iterator.next() != nil {}
        } catch {
            // The head already says there is nothing more to read: a failure after it changes
            // nothing, unless it is the caller's own cancellation.
            if Task.isCancelled { throw CourierError(.cancelled) }
        }
        var settled = self
        settled.body = ByteStream(Data())
        return settled
    }

    /// Why a status below 200 cannot end an exchange.
    private static func notFinal(_ status: Int) -> String {
        switch status {
        case 101: "the server switched protocols (101 Switching Protocols), which the request did not ask for"
        case 100..<200: "the server's final answer has the informational status \(status)"
        default: "the status \(status) is not an HTTP status (they run from 100 to 599)"
        }
    }
}
