#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Decodes a JSON body into `type`, accepting 2xx statuses.
///
/// An empty or malformed body fails with ``CourierError/Cause/decodingFailed(_:)``, whose
/// ``DecodingFailure`` names the coding path and shows the start of the body.
/// - Parameters:
///   - type: The type to decode.
///   - decoder: The JSON decoder; a default `JSONDecoder` when omitted.
/// - Returns: The response decoder.
public func decode<Value: Decodable & Sendable>(_ type: Value.Type, decoder: JSONDecoder = JSONDecoder()) -> ResponseDecoder<Value> {
    ResponseDecoder { response in try decodeJSON(response.body, with: decoder) }
}

/// Decodes a JSON body into `type`, and the JSON body of a non-2xx response into `error`.
///
/// The decoded error is carried by ``CourierError/Cause/unacceptableStatus(_:errorBody:)`` and can
/// be read with ``CourierError/errorBody(as:)``. When the error body does not decode, the status
/// error is thrown without it.
/// - Parameters:
///   - type: The type to decode on success.
///   - error: The type of the server's error bodies.
///   - decoder: The JSON decoder for both.
/// - Returns: The response decoder.
public func decode<Value: Decodable & Sendable, Failure: Decodable & Error>(
    _ type: Value.Type, error: Failure.Type, decoder: JSONDecoder = JSONDecoder()
) -> ResponseDecoder<Value> {
    var result = decode(type, decoder: decoder)
    result.errorBody = { response in
        let failure: Failure? = try? decodeJSON(response.body, with: decoder)
        return failure
    }
    return result
}

/// Decodes a JSON body into `type`, or gives `nil` when there is no body: a 204 or 205 status,
/// or an empty body (as for `HEAD`).
/// - Parameters:
///   - type: The type to decode.
///   - decoder: The JSON decoder.
/// - Returns: The response decoder.
public func decodeIfPresent<Value: Decodable & Sendable>(_ type: Value.Type, decoder: JSONDecoder = JSONDecoder())
    -> ResponseDecoder<Value?>
{
    ResponseDecoder { response in
        if response.status == 204 || response.status == 205 || response.body.isEmpty { return nil }
        let value: Value = try decodeJSON(response.body, with: decoder)
        return value
    }
}

/// Decodes the body as text.
/// - Parameter encoding: The text encoding; UTF-8 by default.
/// - Returns: The response decoder; a body that is not valid in `encoding` fails to decode.
public func decodeText(encoding: String.Encoding = .utf8) -> ResponseDecoder<String> {
    ResponseDecoder { response in
        guard let text = String(data: response.body, encoding: encoding) else {
            throw TextDecodingError(encoding: encoding)
        }
        return text
    }
}

/// Gives the raw body bytes.
/// - Returns: The response decoder.
public func decodeData() -> ResponseDecoder<Data> {
    ResponseDecoder { response in response.body }
}

/// Ignores the body: for 204/205 responses, `HEAD` requests and calls whose answer does not matter.
/// The status is still checked.
/// - Returns: The response decoder.
public func decodeEmpty() -> ResponseDecoder<Void> {
    ResponseDecoder { _ in () }
}

/// A body that is not valid text in the expected encoding.
struct TextDecodingError: Error, CustomStringConvertible {
    var encoding: String.Encoding
    var description: String { "the body is not valid \(encoding) text" }
}

/// Decodes `data` as JSON into the inferred type; a free function so closures never capture a
/// metatype.
func decodeJSON<Value: Decodable>(_ data: Data, with decoder: JSONDecoder) throws -> Value {
    try decoder.decode(Value.self, from: data)
}
