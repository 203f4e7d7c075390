import NIOCore
import NIOHTTP1

/// Every decision about the requests on one HTTP/1.1 connection (or one HTTP/2 stream read as
/// HTTP/1.1 parts), made in a value: the handler's events in (a request to start, response parts,
/// reads, the end of a read, errors, the connection's end) and the call's (its upload done or
/// failed, its reader behind, caught up or gone), the actions out. ``HTTP1Handler`` carries them
/// out on the event loop; this type touches no channel, so each step is tested without one.
///
/// The rules:
/// - **One request at a time** (no pipelining). A request starts only on an open connection that
///   is neither closing nor carrying another; a connection that failed while idle gives that
///   failure to the next request it is lent for.
/// - **Head and body both ways.** A body in hand goes out with the head and the request's end; a
///   streamed body is written by the call's upload, which says when it is done.
/// - **Informational heads** (`100`, `103`, …) are skipped, within ``InformationalHeads``' bounds.
///   A `101` is the answer only to a request that asked to switch protocols (the connection then
///   leaves the pool); to any other it is delivered as the answer (which the core refuses) and the
///   connection closes.
/// - **An early answer** (the response ends before the upload is done) stands; the rest of the
///   upload is not sent, and the connection closes.
/// - **Reuse.** The connection is given back for another request only when the response ended,
///   the request was sent whole, neither side said `Connection: close`, nothing arrived after the
///   answer in the same read, and the connection is open; otherwise it closes. It is given back
///   *before* the call hears of the end, so the caller's next hop finds it idle.
/// - **Backpressure.** While the reader of a streamed body is behind, reads are held.
/// - **Failures.** An error, a cancel or the reader leaving fails the call (a connection closed
///   before any response byte is a lost connection the exchange may send again; after one, a cut
///   body) and closes the connection. Bytes nobody asked for close it too.
struct HTTP1StateMachine {
    /// How the request's body goes out.
    enum Body: Equatable, Sendable {
        /// No body, or one in hand: written with the head, with the request's end.
        case whole
        /// Written by the call's upload, after the head.
        case streamed
    }

    /// What the handler must do.
    enum Action: CustomStringConvertible {
        /// Write the request's head, with its body in hand and its end when `ends`, and flush.
        case writeRequest(ends: Bool)
        /// Start writing the streamed body.
        case startUpload
        /// Ask the channel for bytes.
        case read
        /// Give the call the response's head.
        case deliverHead(HTTPResponseHead)
        /// Give the call a piece of the body.
        case deliverBody(ByteBuffer)
        /// Tell the pool whether the connection may carry another request (the first time only:
        /// the handler forgets the pool once told).
        case release(reusable: Bool)
        /// The response ended: give the call its end.
        case deliverEnd
        /// The call fails.
        case failCall(any Error)
        /// The protocol switched: the answer goes to the call and the connection is its.
        case handOver(HTTPResponseHead)
        /// Close the connection.
        case close

        var description: String {
            switch self {
            case .writeRequest(let ends): ends ? "write request" : "write head"
            case .startUpload: "start upload"
            case .read: "read"
            case .deliverHead(let head): "head \(head.status.code)"
            case .deliverBody(let buffer): "body \(buffer.readableBytes)"
            case .release(let reusable): reusable ? "reuse" : "do not reuse"
            case .deliverEnd: "end"
            case .failCall(let error): "fail (\(error))"
            case .handOver(let head): "hand over after \(head.status.code)"
            case .close: "close"
            }
        }
    }

    /// What one event asks for: at most three actions, in order, kept inline (an event is
    /// several per request, and an array would be an allocation each).
    struct Actions: Sequence {
        private var actions: (Action?, Action?, Action?)

        /// None.
        init() { actions = (nil, nil, nil) }
        /// One.
        init(_ first: Action) { actions = (first, nil, nil) }
        /// Two, in order.
        init(_ first: Action, _ second: Action) { actions = (first, second, nil) }
        /// Three, in order.
        init(_ first: Action, _ second: Action, _ third: Action) { actions = (first, second, third) }

        /// The first action, if any.
        var first: Action? { actions.0 }
        /// Whether there is none.
        var isEmpty: Bool { actions.0 == nil }

        func makeIterator() -> Iterator { Iterator(actions: actions) }

        struct Iterator: IteratorProtocol {
            var actions: (Action?, Action?, Action?)
            var index = 0

            mutating func next() -> Action? {
                defer { index += 1 }
                switch index {
                case 0: return actions.0
                case 1: return actions.1
                case 2: return actions.2
                default: return nil
                }
            }
        }
    }

    private enum State {
        /// Ready for a request.
        case idle
        /// A request in flight.
        case inFlight(Exchange)
        /// The answer ended in the read under way; it is settled when the read is over.
        case ended(Exchange)
        /// The protocol switched: the connection is no longer HTTP/1.1's.
        case handedOver
    }

    private struct Exchange {
        var requestSent: Bool
        var expectsUpgrade: Bool
        var headReceived = false
        var informational = InformationalHeads()
        var readerBehind = false
    }

    private var state = State.idle
    /// Neither side will let the connection carry another request.
    private(set) var isClosing = false
    /// A read asked for while the reader was behind.
    private var readPending = false
    /// What broke the connection while no request was in flight.
    private var failure: (any Error)?
    /// Whether this is an HTTP/2 stream (one exchange, which ends the stream by itself) rather
    /// than an HTTP/1.1 connection.
    let isStream: Bool

    /// A machine for an HTTP/1.1 connection, or for one HTTP/2 stream (`isStream`).
    init(isStream: Bool = false) {
        self.isStream = isStream
    }

    // MARK: The call's side

    /// A request starts (the connection is `active` or not). `expectsUpgrade`: its head asks to
    /// switch protocols.
    mutating func start(body: Body, expectsUpgrade: Bool = false, active: Bool) -> Actions {
        guard case .idle = state, !isClosing, active else {
            return Actions(.failCall(failure ?? NIOTransportError.connectionClosedBeforeResponse))
        }
        state = .inFlight(Exchange(requestSent: body == .whole, expectsUpgrade: expectsUpgrade))
        switch body {
        case .whole: return Actions(.writeRequest(ends: true), .read)
        case .streamed: return Actions(.writeRequest(ends: false), .startUpload, .read)
        }
    }

    /// The streamed body and the request's end are written.
    mutating func uploadFinished() -> Actions {
        guard case .inFlight(var exchange) = state else { return Actions() }
        exchange.requestSent = true
        state = .inFlight(exchange)
        return Actions()
    }

    /// Writing the streamed body failed (its source failed, or broke its length). An answer
    /// already given stands.
    mutating func uploadFailed(_ error: any Error) -> Actions {
        guard case .inFlight = state else { return Actions() }
        return fail(error)
    }

    /// The reader of the streamed body fell behind: reads are held.
    mutating func readerFellBehind() {
        guard case .inFlight(var exchange) = state else { return }
        exchange.readerBehind = true
        state = .inFlight(exchange)
    }

    /// The reader caught up: a held read goes on.
    mutating func readerCaughtUp() -> Actions {
        if case .inFlight(var exchange) = state {
            exchange.readerBehind = false
            state = .inFlight(exchange)
        }
        guard readPending else { return Actions() }
        readPending = false
        return Actions(.read)
    }

    /// The call is cancelled, or its reader left before the end.
    mutating func cancel(_ error: any Error) -> Actions {
        guard case .inFlight = state else { return Actions() }
        return fail(error)
    }

    // MARK: The channel's side

    /// A response head arrived.
    mutating func receivedHead(_ head: HTTPResponseHead) -> Actions {
        guard case .inFlight(var exchange) = state else { return unasked() }
        let status = head.status.code
        if (100..<200).contains(status), status != 101 {
            // Not the answer (RFC 9110 §15.2), and bounded.
            if let excess = exchange.informational.count(head) {
                state = .inFlight(exchange)
                return fail(NIOTransportError.tooManyInformationalHeads(excess))
            }
            state = .inFlight(exchange)
            return Actions()
        }
        exchange.headReceived = true
        if status == 101, exchange.expectsUpgrade {
            state = .handedOver
            isClosing = true
            return Actions(.release(reusable: false), .handOver(head))
        }
        if (!isStream && !head.isKeepAlive) || status < 200 { isClosing = true }
        state = .inFlight(exchange)
        return Actions(.deliverHead(head))
    }

    /// A piece of the response body arrived.
    mutating func receivedBody(_ buffer: ByteBuffer) -> Actions {
        guard case .inFlight = state else { return unasked() }
        return Actions(.deliverBody(buffer))
    }

    /// The response ended; it is settled once the read is over (``readComplete(active:)``).
    mutating func receivedEnd() -> Actions {
        guard case .inFlight(let exchange) = state else { return unasked() }
        state = .ended(exchange)
        return Actions()
    }

    /// A read is over. The connection is `active` or not.
    mutating func readComplete(active: Bool) -> Actions {
        settle(active: active)
    }

    /// The pipeline asks for bytes.
    mutating func read() -> Actions {
        if case .inFlight(let exchange) = state, exchange.readerBehind {
            readPending = true
            return Actions()
        }
        return Actions(.read)
    }

    /// The channel reported an error.
    mutating func errorCaught(_ error: any Error) -> Actions {
        switch state {
        case .inFlight: return fail(error)
        case .ended:
            // Bytes after an answer that had ended did not parse: the answer stands.
            isClosing = true
            return settle(active: false)
        case .idle:
            isClosing = true
            if failure == nil { failure = error }
            return Actions(.release(reusable: false), .close)
        case .handedOver:
            return Actions()
        }
    }

    /// The connection closed.
    mutating func closed() -> Actions {
        isClosing = true
        switch state {
        case .ended:
            // An answer that ended just before the close is whole.
            return settle(active: false, closes: false)
        case .inFlight(let exchange):
            state = .idle
            let error = exchange.headReceived ? NIOTransportError.connectionClosedMidBody : NIOTransportError.connectionClosedBeforeResponse
            return Actions(.release(reusable: false), .failCall(error))
        case .idle:
            return Actions(.release(reusable: false))
        case .handedOver:
            return Actions()
        }
    }

    // MARK: Decisions

    /// Bytes nobody asked for (a body longer than its framing said, a second response): the
    /// connection is not trusted with another request. An answer that ended in the same read is
    /// still given, on a connection that is not kept.
    private mutating func unasked() -> Actions {
        isClosing = true
        if case .ended = state { return Actions() }
        if case .handedOver = state { return Actions() }
        return Actions(.release(reusable: false), .close)
    }

    /// Settles an answer that ended: the connection back to the pool (before the call hears of
    /// the end) or closed.
    private mutating func settle(active: Bool, closes: Bool = true) -> Actions {
        guard case .ended(let exchange) = state else { return Actions() }
        state = .idle
        if isStream && exchange.requestSent {
            // Both sides sent their end: the stream is over, and closes by itself.
            isClosing = true
            return Actions(.release(reusable: false), .deliverEnd)
        }
        if !isClosing && exchange.requestSent && active {
            return Actions(.release(reusable: true), .deliverEnd)
        }
        // Answered before the whole upload was sent: the rest is not sent.
        isClosing = true
        return closes ? Actions(.release(reusable: false), .deliverEnd, .close) : Actions(.release(reusable: false), .deliverEnd)
    }

    /// Fails the call in flight and closes the connection.
    private mutating func fail(_ error: any Error) -> Actions {
        state = .idle
        isClosing = true
        return Actions(.release(reusable: false), .failCall(error), .close)
    }
}
