import CourierCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A whole WebSocket message: text (UTF-8, checked) or binary, however many frames it came in.
///
/// ```swift
/// for try await message in socket.messages {
///     switch message {
///     case .text(let text): print(text)
///     case .binary(let data): print("\(data.count) bytes")
///     }
/// }
/// ```
public enum WebSocketMessage: Sendable, Hashable {
    /// A text message.
    case text(String)
    /// A binary message.
    case binary(Data)

    /// The message's bytes: the UTF-8 of a text message, the data of a binary one.
    public var data: Data {
        switch self {
        case .text(let text): Data(text.utf8)
        case .binary(let data): data
        }
    }

    /// The message decoded from JSON (text or binary alike), as ``Resource`` decodes a body.
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - decoder: The decoder; a plain `JSONDecoder` by default.
    /// - Returns: The value.
    /// - Throws: ``CourierError`` with ``CourierError/Cause/decodingFailed(_:)`` when it does not decode.
    public func decode<Value: Decodable>(_ type: Value.Type = Value.self, decoder: JSONDecoder = JSONDecoder()) throws(CourierError) -> Value {
        let data = self.data
        do {
            return try decoder.decode(type, from: data)
        } catch {
            throw CourierError(.decodingFailed(DecodingFailure(value: Value.self, error: error, body: data)), underlyingError: error)
        }
    }

    /// A text message holding `value` as JSON.
    /// - Parameters:
    ///   - value: The value.
    ///   - encoder: The encoder; a plain `JSONEncoder` by default.
    /// - Returns: The message.
    /// - Throws: ``CourierError`` when the value does not encode (nothing is sent).
    public static func json(_ value: some Encodable, encoder: JSONEncoder = JSONEncoder()) throws(CourierError) -> WebSocketMessage {
        do {
            return .text(String(decoding: try encoder.encode(value), as: UTF8.self))
        } catch {
            throw CourierError(.webSocket(WebSocketFailure(.invalidArgument, message: "the value did not encode as JSON: \(type(of: value))")), underlyingError: error)
        }
    }
}
