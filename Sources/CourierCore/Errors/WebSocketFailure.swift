/// Why a WebSocket could not be opened, or how it failed once open
/// (``CourierError/Cause/webSocket(_:)``).
///
/// ```swift
/// do {
///     for try await message in socket.messages { … }
/// } catch let error as CourierError {
///     if case .webSocket(let failure) = error.cause, failure.kind == .connectionLost { reconnect() }
/// }
/// ```
public struct WebSocketFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The broad kind of failure. Kinds are added in minor releases: match with a `default:`.
    #if hasAttribute(nonexhaustive)
        @nonexhaustive
    #endif
    public enum Kind: Sendable, Hashable {
        /// The server answered the opening handshake with another status than `101 Switching
        /// Protocols` (the response, with the start of its body, is on the error).
        case upgradeRefused
        /// The server switched protocols but its answer breaks RFC 6455 §4.2.2 (a wrong
        /// `Sec-WebSocket-Accept`, a subprotocol or extension that was not offered).
        case handshakeFailed
        /// The executor's transport cannot open a WebSocket; nothing was sent.
        case unsupportedTransport
        /// The peer broke the protocol (RFC 6455: a masked frame, reserved bits, an unknown
        /// opcode, a bad control frame, a continuation without a start, a bad close code).
        /// Courier closed with ``WebSocketCloseCode/protocolError``, or with
        /// ``WebSocketCloseCode/invalidPayload`` for a compressed message that does not inflate.
        case protocolError
        /// A text message or close reason that is not UTF-8; Courier closed with
        /// ``WebSocketCloseCode/invalidPayload``.
        case invalidUTF8
        /// A frame or message longer than the socket's limit, or a compressed message that
        /// inflates past it; Courier closed with ``WebSocketCloseCode/messageTooBig`` before
        /// buffering it.
        case messageTooLarge
        /// What the caller asked to send cannot be sent (a close code that may not go on the
        /// wire, a close reason over 123 bytes, a ping payload over 125, a value that does not
        /// encode); nothing was sent and the socket stays open.
        case invalidArgument
        /// The peer did not answer a keep-alive ping in time; the connection was dropped.
        case pingTimedOut
        /// The closing handshake was not finished in time; the connection was dropped.
        case closeTimedOut
        /// The connection ended without a closing handshake (close code 1006 in the RFC's terms).
        case connectionLost
        /// The socket is closed (or closing): nothing more can be sent.
        case closed
        /// A message sent without waiting (`WebSocket.enqueue(_:)`) would take the messages
        /// waiting for the connection past the socket's queue limit
        /// (`WebSocketOptions.maximumQueuedBytes`); it was not queued and the socket stays open.
        case sendQueueFull
    }

    /// The broad kind of failure.
    public var kind: Kind
    /// A short explanation, without secrets.
    public var message: String
    /// The close code Courier sent (for a failure it closed the socket over) or received, when
    /// there is one.
    public var closeCode: WebSocketCloseCode?

    /// Creates a failure.
    /// - Parameters:
    ///   - kind: The broad kind.
    ///   - message: A short explanation; must not contain secrets.
    ///   - closeCode: The close code sent or received, if any.
    public init(_ kind: Kind, message: String, closeCode: WebSocketCloseCode? = nil) {
        self.kind = kind
        self.message = message
        self.closeCode = closeCode
    }

    /// Whether opening a new socket may succeed: a lost connection or a peer that stopped
    /// answering pings.
    public var isTransient: Bool { kind == .connectionLost || kind == .pingTimedOut || kind == .closeTimedOut }

    /// The message, with the close code when there is one.
    public var description: String {
        closeCode.map { "\(message) (close code \($0))" } ?? message
    }
}
