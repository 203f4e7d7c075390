import CourierCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An open WebSocket (RFC 6455), opened by ``Executor/webSocket(_:options:clock:)``
/// through the executor's middleware, redirects and transport.
///
/// ```swift
/// let socket = try await executor.webSocket(.get |> url("wss://chat.example/live") |> bearer(token))
/// try await socket.send(.text("hello"))
/// for try await message in socket.messages {
///     print(message)
/// }
/// print(try await socket.closed)   // closed by the server with 1000 normal closure
/// ```
///
/// **Reading.** ``messages`` hands out whole messages (text checked as UTF-8) with backpressure:
/// at most ``WebSocketOptions/bufferedMessages`` wait unread (with at most 256 KiB of bytes
/// behind them), then the socket stops reading the connection. Pings are answered and the peer's close frame is answered while reading, so keep
/// reading (or close) for those to go out. The sequence ends after a clean close and throws the
/// socket's failure otherwise; one reader at a time.
///
/// **The end** is one outcome (``closed``): a clean close (who closed first, the code, the
/// reason) or a ``CourierError``: the peer broke the protocol (Courier closed with the right
/// code), a message over the limit, a ping unanswered, the connection lost. Cancelling a task
/// that waits on the socket (reading, sending, pinging, closing) ends it at once, and so does
/// dropping the last reference to it.
public final class WebSocket: Sendable {
    /// The subprotocol the server chose among those offered (``WebSocketOptions/subprotocols``),
    /// or `nil`.
    public let subprotocol: String?
    /// What the server accepted of the compression offered (``WebSocketOptions/compression``),
    /// or `nil`: then no message is compressed either way.
    public var compression: NegotiatedCompression? { engine.compression }
    /// The server's `101 Switching Protocols` answer (status and headers, no body).
    public let response: Response
    let engine: SocketEngine
    /// The most bytes the transport buffers ahead of the read loop (256 KiB).
    static let byteBufferLimit = 256 << 10

    init(engine: SocketEngine, response: Response, subprotocol: String?) {
        self.engine = engine
        self.response = response
        self.subprotocol = subprotocol
    }

    deinit {
        engine.end(.failure(CourierError(
            .webSocket(WebSocketFailure(.closed, message: "the socket was dropped without closing it", closeCode: .abnormalClosure)),
            request: engine.request)))
    }

    /// The messages from the server, as they arrive; see above. A socket opened with a message
    /// handler (``Executor/webSocket(_:options:clock:onMessage:)``) hands its messages to the
    /// handler: this sequence then hands out none and ends (or throws) with the socket.
    public var messages: Messages { Messages(socket: self) }

    /// Sends a message as one frame, suspending while the connection cannot take more.
    /// - Parameter message: The message.
    /// - Throws: ``CourierError``: ``WebSocketFailure/Kind/closed`` once the socket is closing or
    ///   closed, the socket's failure once it failed.
    public func send(_ message: WebSocketMessage) async throws(CourierError) {
        // While no other send has the turn and the connection has room, the frame goes at once:
        // nothing suspends, so there is nothing to cancel.
        if !Task.isCancelled {
            switch try engine.sendNow(message) {
            case .sent: return
            case .holding(let outgoing):
                try await whileWaiting { () async throws(CourierError) in try await engine.finish(outgoing) }
                return
            case .busy: break
            }
        }
        try await whileWaiting { () async throws(CourierError) in try await engine.send(message) }
    }

    /// Sends a message as one frame without suspending, for code that may not wait (a message
    /// handler, ``Executor/webSocket(_:options:clock:onMessage:)``; a callback of another
    /// library): written at once while no other send is under way and the connection has room,
    /// otherwise queued, and written in order after the sends asked for before it. Up to
    /// ``WebSocketOptions/maximumQueuedBytes`` of messages may wait so; then this throws and
    /// queues nothing. A message still queued when the socket ends is not sent (``closed`` says
    /// how it ended).
    /// - Parameter message: The message.
    /// - Throws: ``CourierError``: ``WebSocketFailure/Kind/sendQueueFull`` (nothing queued, the
    ///   socket stays open), ``WebSocketFailure/Kind/closed`` once the socket is closing or
    ///   closed, the socket's failure once it failed.
    public func enqueue(_ message: WebSocketMessage) throws(CourierError) {
        try engine.enqueue(message)
    }

    /// Sends `value` as a JSON text message.
    /// - Parameters:
    ///   - value: The value.
    ///   - encoder: The encoder; a plain `JSONEncoder` by default.
    /// - Throws: ``CourierError``, as ``send(_:)``, or when the value does not encode (nothing sent).
    public func send(json value: some Encodable, encoder: JSONEncoder = JSONEncoder()) async throws(CourierError) {
        try await send(WebSocketMessage.json(value, encoder: encoder))
    }

    /// Sends a ping and waits for the pong, up to ``WebSocketOptions/pingTimeout``.
    /// - Throws: ``CourierError``: ``WebSocketFailure/Kind/pingTimedOut`` (the socket then fails:
    ///   a peer that does not answer is taken for dead), or the socket's end.
    public func ping() async throws(CourierError) {
        try await whileWaiting { () async throws(CourierError) in try await engine.ping() }
    }

    /// Closes the socket: sends a close frame with `code` and `reason`, then waits for the
    /// server's, at most ``WebSocketOptions/closeTimeout`` (then the connection is dropped and
    /// ``closed`` says ``WebSocketFailure/Kind/closeTimedOut``). Messages read before the close
    /// stay in ``messages``; later ones are not handed out. Closing a closed socket does nothing.
    /// - Parameters:
    ///   - code: The close code; ``WebSocketCloseCode/normalClosure`` by default.
    ///   - reason: Why, at most 123 bytes of UTF-8; empty by default.
    /// - Throws: ``CourierError`` with ``WebSocketFailure/Kind/invalidArgument`` for a code that
    ///   may not be sent (``WebSocketCloseCode/mayBeSent``) or a longer reason: nothing is sent.
    public func close(_ code: WebSocketCloseCode = .normalClosure, reason: String = "") async throws(CourierError) {
        guard code.mayBeSent else {
            throw invalid("the close code \(code.rawValue) may not be sent (1000–1003, 1007–1014 and 3000–4999 may)")
        }
        guard reason.utf8.count <= 123 else {
            throw invalid("a close reason takes at most 123 bytes of UTF-8; this one takes \(reason.utf8.count)")
        }
        await engine.close(code, reason: reason)
    }

    /// How the socket ended, once it has: a clean close, or its failure thrown. Waiting is not
    /// reading: read ``messages`` (or close) for the closing handshake to go on.
    public var closed: WebSocketClose {
        get async throws(CourierError) {
            try await engine.outcome().get()
        }
    }

    /// Runs `operation`; a cancelled task ends the socket at once.
    private func whileWaiting(_ operation: () async throws(CourierError) -> Void) async throws(CourierError) {
        let engine = self.engine
        do {
            try await withTaskCancellationHandler {
                try await operation()
            } onCancel: {
                engine.cancel()
            }
        } catch let error as CourierError {
            throw error
        } catch {
            throw engine.cancelled()
        }
    }

    private func invalid(_ message: String) -> CourierError {
        CourierError(.webSocket(WebSocketFailure(.invalidArgument, message: message)), request: engine.request)
    }

    /// The messages of a ``WebSocket``: see ``WebSocket/messages``.
    public struct Messages: AsyncSequence, Sendable {
        /// A whole message.
        public typealias Element = WebSocketMessage
        /// The socket's failure.
        public typealias Failure = CourierError
        let socket: WebSocket

        /// Starts reading.
        public func makeAsyncIterator() -> Iterator { Iterator(socket: socket) }

        /// Reads the messages of a ``WebSocket``.
        public struct Iterator: AsyncIteratorProtocol {
            let socket: WebSocket

            /// The next message, or `nil` after a clean close.
            /// - Throws: ``CourierError``: the socket's failure, or cancellation (which ends it).
            public mutating func next() async throws(CourierError) -> WebSocketMessage? {
                try await next(isolation: nil)
            }

            /// The next message, read without leaving `actor` (SE-0421).
            /// - Parameter actor: The actor the reader runs on, if any.
            /// - Throws: ``CourierError``: the socket's failure, or cancellation (which ends it).
            public mutating func next(isolation actor: isolated (any Actor)?) async throws(CourierError) -> WebSocketMessage? {
                let engine = socket.engine
                // A message already here is taken without suspending (a cancelled reader goes
                // the long way, which ends the socket). Otherwise the reader waits in its own
                // isolation: every call below inherits `actor`, so a message costs one resume
                // and no executor switch.
                if !Task.isCancelled, let ready = engine.buffer.takeReady() { return try ready.get() }
                let result = await withTaskCancellationHandler {
                    await withUnsafeContinuation { engine.buffer.wait($0) }
                } onCancel: {
                    engine.cancel()
                }
                return try result.get()
            }
        }
    }
}
