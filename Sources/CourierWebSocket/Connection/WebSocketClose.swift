import CourierCore

/// How a WebSocket ended cleanly: who closed it first, with which code and reason
/// (``WebSocket/closed``). A socket that failed instead throws its ``CourierError``.
public struct WebSocketClose: Sendable, Hashable, CustomStringConvertible {
    /// Which end sent the first close frame.
    public enum Initiator: Sendable, Hashable {
        /// This client (``WebSocket/close(_:reason:)``).
        case client
        /// The server.
        case server
    }

    /// Which end sent the first close frame.
    public var initiator: Initiator
    /// The code of the first close frame, or `nil` when it carried none (1005 in the RFC's terms).
    public var code: WebSocketCloseCode?
    /// The reason of the first close frame; may be empty.
    public var reason: String

    /// A clean close.
    /// - Parameters:
    ///   - initiator: Which end closed first.
    ///   - code: The code, if any.
    ///   - reason: The reason.
    public init(initiator: Initiator, code: WebSocketCloseCode?, reason: String = "") {
        self.initiator = initiator
        self.code = code
        self.reason = reason
    }

    /// Who closed, with the code and reason.
    public var description: String {
        var text = "closed by the \(initiator == .client ? "client" : "server")"
        text += code.map { " with \($0)" } ?? " without a code"
        if !reason.isEmpty { text += ": \(reason.debugDescription)" }
        return text
    }
}
