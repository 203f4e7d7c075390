/// Compression of a WebSocket's messages with permessage-deflate (RFC 7692), offered in the
/// opening handshake when ``WebSocketOptions/compression`` is set.
///
/// When the server accepts, messages it compressed are inflated (in Swift: the library needs no
/// zlib), never past ``WebSocketOptions/maximumMessageSize`` — a small message that would inflate
/// to gigabytes fails the socket with ``WebSocketFailure/Kind/messageTooLarge`` and close code
/// 1009 once it reaches the limit. Messages this end sends are compressed when they are at least
/// ``minimumSize`` bytes and compression makes them shorter, within the window the server allows,
/// each on its own by default. With ``clientNoContextTakeover`` set to `false`, a message may
/// refer back to the ones compressed before it (the context taken over: the last 32 KiB at most),
/// which shrinks a feed of small, similar messages several times over, at the cost of memory
/// kept per socket (``clientNoContextTakeover``).
/// A server that declines leaves every message uncompressed.
///
/// ```swift
/// var options = WebSocketOptions()
/// options.compression = .permessageDeflate
/// let socket = try await executor.webSocket(.get |> url("wss://feed.example/ticks"), options: options)
/// socket.compression   // what the server accepted, or nil
/// ```
///
/// Compression and secrets do not mix: a message that holds a secret and text an attacker
/// chooses can leak the secret through its compressed length (the CRIME and BREACH attacks).
/// Leave compression off for such sockets, or send those messages below ``minimumSize``.
public struct WebSocketCompression: Sendable, Hashable {
    /// Messages this end sends are compressed from this many bytes on (when that makes them
    /// shorter); shorter ones go as they are. 1,024 bytes by default; `Int.max` never compresses
    /// what this end sends (the server's messages are still inflated). Negative values count as 0.
    public var minimumSize: Int {
        get { threshold }
        set { threshold = max(0, newValue) }
    }
    /// Whether to ask the server to compress each message on its own
    /// (`server_no_context_takeover`): the socket then keeps no 32 KiB window of earlier messages,
    /// at some cost in how well the server compresses. `false` by default; a server may choose
    /// it even when not asked.
    public var serverNoContextTakeover: Bool
    /// Whether this end compresses each message on its own (`client_no_context_takeover`), rather
    /// than with the messages it compressed before as their context. `true` by default: nothing
    /// kept here between messages, no window for this end kept by the server. `false` takes the
    /// context over: 70-byte JSON ticks go out at about 27% of their size instead of 96%, for
    /// about 192 KiB per socket from its first compressed message (up to two windows of what it
    /// sent and the deflater's chains over them, as zlib keeps).
    /// A server may still ask this end to compress each message on its own.
    public var clientNoContextTakeover: Bool

    private var threshold: Int

    /// Compression with these settings.
    /// - Parameters:
    ///   - minimumSize: The smallest message this end compresses.
    ///   - serverNoContextTakeover: Whether to ask the server to compress each message on its own.
    ///   - clientNoContextTakeover: Whether this end compresses each message on its own.
    public init(minimumSize: Int = 1024, serverNoContextTakeover: Bool = false, clientNoContextTakeover: Bool = true) {
        self.threshold = max(0, minimumSize)
        self.serverNoContextTakeover = serverNoContextTakeover
        self.clientNoContextTakeover = clientNoContextTakeover
    }

    /// permessage-deflate with the defaults above.
    public static var permessageDeflate: WebSocketCompression { WebSocketCompression() }
}

/// What the server accepted of the permessage-deflate offer (RFC 7692 §7.1).
public struct NegotiatedCompression: Sendable, Hashable, CustomStringConvertible {
    /// Whether the server compresses each message on its own (so no window is kept between them).
    public var serverNoContextTakeover: Bool
    /// The server's LZ77 window, as a power of two (8…15).
    public var serverMaxWindowBits: Int
    /// The window this end's back-references stay within, as a power of two (8…15).
    public var clientMaxWindowBits: Int
    /// Whether this end compresses each message on its own: it asked to, or the server did.
    public var clientNoContextTakeover: Bool = true

    /// The parameters in effect, written as a `Sec-WebSocket-Extensions` element.
    public var description: String {
        var text = "permessage-deflate"
        if serverNoContextTakeover { text += "; server_no_context_takeover" }
        if clientNoContextTakeover { text += "; client_no_context_takeover" }
        if serverMaxWindowBits != 15 { text += "; server_max_window_bits=\(serverMaxWindowBits)" }
        if clientMaxWindowBits != 15 { text += "; client_max_window_bits=\(clientMaxWindowBits)" }
        return text
    }
}
