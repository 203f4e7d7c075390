/// The status code of a WebSocket close frame (RFC 6455 §7.4).
///
/// ```swift
/// try await socket.close(.goingAway, reason: "shutting down")
/// ```
public struct WebSocketCloseCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The code, from 1000 to 4999 on the wire.
    public var rawValue: UInt16

    /// A close code.
    /// - Parameter rawValue: The code.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// `1000`: the purpose of the connection is fulfilled.
    public static let normalClosure = WebSocketCloseCode(rawValue: 1000)
    /// `1001`: the endpoint is going away (a server shutting down, a page left).
    public static let goingAway = WebSocketCloseCode(rawValue: 1001)
    /// `1002`: the peer broke the protocol.
    public static let protocolError = WebSocketCloseCode(rawValue: 1002)
    /// `1003`: a kind of data the endpoint cannot accept (text to a binary-only endpoint).
    public static let unsupportedData = WebSocketCloseCode(rawValue: 1003)
    /// `1005`: no code was present in the peer's close frame (never sent).
    public static let noStatusReceived = WebSocketCloseCode(rawValue: 1005)
    /// `1006`: the connection ended without a close frame (never sent).
    public static let abnormalClosure = WebSocketCloseCode(rawValue: 1006)
    /// `1007`: a message's data did not match its type (text that is not UTF-8).
    public static let invalidPayload = WebSocketCloseCode(rawValue: 1007)
    /// `1008`: a message broke the endpoint's policy.
    public static let policyViolation = WebSocketCloseCode(rawValue: 1008)
    /// `1009`: a message too big to process.
    public static let messageTooBig = WebSocketCloseCode(rawValue: 1009)
    /// `1010`: the server did not negotiate an extension the client requires.
    public static let mandatoryExtension = WebSocketCloseCode(rawValue: 1010)
    /// `1011`: the server met an unexpected condition.
    public static let internalError = WebSocketCloseCode(rawValue: 1011)

    /// Whether this code may appear in a close frame on the wire (RFC 6455 §7.4.1 and the IANA
    /// registry): 1000–1003, 1007–1011 (and 1012–1014, registered since), or 3000–4999. `1005`,
    /// `1006` and `1015` are for reporting only.
    public var mayBeSent: Bool {
        switch rawValue {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }

    /// The number, with its name when it has one.
    public var description: String {
        let names: [UInt16: String] = [
            1000: "normal closure", 1001: "going away", 1002: "protocol error", 1003: "unsupported data",
            1005: "no status received", 1006: "abnormal closure", 1007: "invalid payload", 1008: "policy violation",
            1009: "message too big", 1010: "mandatory extension", 1011: "internal error",
        ]
        return names[rawValue].map { "\(rawValue) \($0)" } ?? "\(rawValue)"
    }
}
