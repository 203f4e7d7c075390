import CourierCore

/// The limits and timers of a WebSocket (``Executor/webSocket(_:options:clock:)``).
///
/// ```swift
/// var options = WebSocketOptions(subprotocols: ["chat.v2"])
/// options.pingInterval = .seconds(20)      // a dead peer fails the socket within 30 s
/// options.maximumMessageSize = 1 << 20     // 1 MiB; a longer message closes with 1009
/// let socket = try await executor.webSocket(.get |> url("wss://chat.example/live") |> bearer(token), options: options)
/// ```
public struct WebSocketOptions: Sendable {
    /// The subprotocols offered, most preferred first (`Sec-WebSocket-Protocol`); the server's
    /// choice is ``WebSocket/subprotocol``. Each must be an HTTP token. None by default.
    public var subprotocols: [String]
    /// The most bytes a message may have (all its frames together); a longer one fails the socket
    /// with ``WebSocketFailure/Kind/messageTooLarge`` and closes it with 1009, before its bytes
    /// are kept. 16 MiB by default; negative values count as `0`.
    public var maximumMessageSize: Int {
        get { messageLimit }
        set { messageLimit = max(0, newValue) }
    }
    /// The most messages that may wait unread in ``WebSocket/messages``; past it the socket stops
    /// reading (the peer's writes then wait on TCP's flow control). 16 by default; at least 1.
    public var bufferedMessages: Int {
        get { messageQueue }
        set { messageQueue = max(1, newValue) }
    }
    /// The most bytes of messages that may wait in ``WebSocket/enqueue(_:)``'s queue (sent
    /// without waiting while the connection had no room); one more fails with
    /// ``WebSocketFailure/Kind/sendQueueFull`` and is not queued. 16 MiB by default; negative
    /// values count as `0` (then a message is only taken when it can go at once).
    public var maximumQueuedBytes: Int {
        get { queueLimit }
        set { queueLimit = max(0, newValue) }
    }
    /// permessage-deflate (RFC 7692) to offer, or `nil` (the default) for none; what the server
    /// accepted is ``WebSocket/compression``. See ``WebSocketCompression`` (and its word on
    /// secrets).
    public var compression: WebSocketCompression?
    /// How often a keep-alive ping is sent while the socket is open, or `nil` (the default) for
    /// none. A zero or negative interval counts as `nil`.
    public var pingInterval: Duration? {
        get { interval }
        set { interval = newValue.flatMap { $0 > .zero ? Self.bounded($0) : nil } }
    }
    /// How long a ping (``WebSocket/ping()`` or a keep-alive) waits for its pong before the peer
    /// is taken for dead and the socket fails with ``WebSocketFailure/Kind/pingTimedOut``. 10
    /// seconds by default; a negative value counts as zero.
    public var pingTimeout: Duration {
        get { pongWait }
        set { pongWait = Self.bounded(newValue) }
    }
    /// How long ``WebSocket/close(_:reason:)`` waits for the peer's close frame before it drops
    /// the connection (``WebSocketFailure/Kind/closeTimedOut``). 5 seconds by default; a negative
    /// value counts as zero.
    public var closeTimeout: Duration {
        get { closeWait }
        set { closeWait = Self.bounded(newValue) }
    }

    /// `duration` between zero and ``Request/maximumInterval`` (a year): a clock's deadline
    /// arithmetic must not overflow, whatever a caller passes.
    private static func bounded(_ duration: Duration) -> Duration {
        min(max(.zero, duration), .seconds(Request.maximumInterval))
    }

    private var messageLimit = 16 << 20
    private var messageQueue = 16
    private var queueLimit = 16 << 20
    private var interval: Duration?
    private var pongWait = Duration.seconds(10)
    private var closeWait = Duration.seconds(5)

    /// Options with the defaults above.
    /// - Parameters:
    ///   - subprotocols: The subprotocols to offer, most preferred first.
    ///   - maximumMessageSize: The most bytes a message may have.
    ///   - pingInterval: How often to send a keep-alive ping, or `nil` for none.
    public init(subprotocols: [String] = [], maximumMessageSize: Int = 16 << 20, pingInterval: Duration? = nil) {
        self.subprotocols = subprotocols
        self.maximumMessageSize = maximumMessageSize
        self.pingInterval = pingInterval
    }
}
