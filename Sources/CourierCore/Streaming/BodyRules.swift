#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What the ``Exchange`` holds a response body to, written once for every transport and applied
/// where the transport hands the bytes over: the size limit (counted as bytes arrive, so memory
/// stays bounded whoever reads), the framing check (a body that ends shorter or longer than its
/// `Content-Length` fails), and the idle timer (each chunk is activity).
package struct BodyRules: Sendable {
    /// The most body bytes, or `nil`.
    var maximumSize: Int?
    /// The length the framing rule holds the body to, or `nil` when it does not check this one.
    var expectedLength: Int?
    /// The idle timer of the request's ``Request/timeout``, or `nil`.
    var timer: IdleTimer?
    /// The request the errors name.
    var request: Request
    /// The response's head (no body), once it is known: a body stopped at the size limit keeps
    /// its status and fields on the error, so that a 200 with a huge body is not taken for a
    /// failed call.
    var head: Response?
    /// Whether unread bytes pause the idle timer (a reader is behind). `false` for a body a
    /// transport gathers whole before anyone reads it.
    var pausesForReader = true

    /// The error past ``maximumSize``.
    var tooLarge: CourierError {
        var head = head
        head?.body = Data()
        return CourierError(.responseTooLarge(limit: maximumSize ?? 0), request: request, response: head)
    }

    /// The error when the timer fires.
    var timedOut: CourierError { CourierError.timedOut(.init(.idle, limit: timer?.timeout), request: request) }

    /// The framing error for a body that ended after `received` bytes, if it is one.
    func framingError(received: Int) -> CourierError? {
        guard let expectedLength, expectedLength != received else { return nil }
        return CourierError(.transport(Response.framingFailure(expected: expectedLength, received: received)), request: request)
    }
}
