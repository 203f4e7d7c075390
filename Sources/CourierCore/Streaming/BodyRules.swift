#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What the ``Exchange`` holds a response body to, written once for every transport and applied
/// where the transport hands the bytes over: the size limit (counted as bytes arrive, so memory
/// stays bounded whoever reads), the framing check (a body that ends shorter or longer than its
/// `Content-Length` fails), and the idle timer (each chunk is activity).
///
/// A transport that gathers under the rules (``GathersUnderRules``) does three things with them:
/// it starts the idle timer when the hop starts (``watch(onIdle:)``, whose action stops the
/// transfer; the exchange then reports the timeout), reports activity as bytes arrive
/// (``noteActivity()``; upload progress already counts), and stops gathering past
/// ``maximumSize`` with ``tooLarge(head:)``. The exchange stops the timer and checks the framing
/// once the body is in hand.
@_spi(Transports) public struct BodyRules: Sendable {
    /// The most body bytes (after any content coding is undone), or `nil` for no limit.
    public internal(set) var maximumSize: Int?
    /// The length the framing rule holds the body to, or `nil` when it does not check this one.
    var expectedLength: Int?
    /// The idle timer of the request's ``Request/timeout``, or `nil`.
    var timer: IdleTimer? { call.timer }
    /// The request the errors name.
    var request: Request { call.request }
    /// The response's head (no body), once it is known: a body stopped at the size limit keeps
    /// its status and fields on the error, so that a 200 with a huge body is not taken for a
    /// failed call.
    var head: Response?
    /// Whether unread bytes pause the idle timer (a reader is behind). `false` for a body a
    /// transport gathers whole before anyone reads it.
    var pausesForReader = true
    /// The call's request and timer, behind one reference: the rules travel in every copy of
    /// the hop's ``StreamOptions``, and a `Request` copied field by field is a dozen reference
    /// counts each time.
    private let call: Call

    /// What the rules name and watch; never changed once made.
    private final class Call: Sendable {
        let request: Request
        let timer: IdleTimer?
        init(request: Request, timer: IdleTimer?) {
            self.request = request
            self.timer = timer
        }
    }

    /// Rules for a hop of `request`.
    init(maximumSize: Int?, expectedLength: Int? = nil, timer: IdleTimer?, request: Request, pausesForReader: Bool = true) {
        self.maximumSize = maximumSize
        self.expectedLength = expectedLength
        self.call = Call(request: request, timer: timer)
        self.pausesForReader = pausesForReader
    }

    /// The error past ``maximumSize``.
    var tooLarge: CourierError {
        var head = head
        head?.body = Data()
        return CourierError(.responseTooLarge(limit: maximumSize ?? 0), request: request, response: head)
    }

    /// The error when the timer fires.
    var timedOut: CourierError { CourierError.timedOut(.init(.idle, limit: timer?.timeout), request: request) }

    /// How long the hop may go without activity, or `nil` when it has no timeout.
    public var idleTimeout: Duration? { timer?.timeout }

    /// Starts the idle timer, when there is one: `onIdle` runs once, from another thread, if the
    /// hop goes without activity (``noteActivity()``, upload progress) for ``idleTimeout``. It
    /// should stop the transfer promptly; the exchange then fails the hop as timed out.
    /// - Parameter onIdle: Stops the transfer.
    public func watch(onIdle: @escaping @Sendable () -> Void) {
        timer?.start(onIdle: onIdle)
    }

    /// Records activity now (a head or body bytes arrived): a cheap clock read and a lock.
    public func noteActivity() {
        timer?.touch()
    }

    /// The error for a body that went past ``maximumSize``, keeping `head`'s status and fields
    /// (not its body).
    /// - Parameter head: The response's head.
    /// - Returns: ``CourierError/Cause/responseTooLarge(limit:)``, naming the request.
    public func tooLarge(head: Response) -> CourierError {
        var rules = self
        rules.head = head
        return rules.tooLarge
    }

    /// The framing error for a body that ended after `received` bytes, if it is one.
    func framingError(received: Int) -> CourierError? {
        guard let expectedLength, expectedLength != received else { return nil }
        return CourierError(.transport(Response.framingFailure(expected: expectedLength, received: received)), request: request)
    }
}
