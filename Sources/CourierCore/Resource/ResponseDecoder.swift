#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// How to turn a ``Response`` into a value: which statuses and content types are acceptable, how
/// to decode an error body, and how to decode a successful body.
///
/// A decoder is a plain value wrapping functions. Apply one to a request with `|>` to get a
/// ``Resource``. Ready-made decoders: ``decode(_:decoder:)``, ``decode(_:error:decoder:)``,
/// ``decodeIfPresent(_:decoder:)``, ``decodeText(encoding:)``, ``decodeData()``,
/// ``decodeEmpty()``. A custom one is a closure:
///
/// ```swift
/// let csv = ResponseDecoder<[[String]]> { response in
///     String(decoding: response.body, as: UTF8.self)
///         .split(separator: "\n").map { $0.split(separator: ",").map(String.init) }
/// }
/// ```
public struct ResponseDecoder<Value>: Sendable {
    /// Whether a status is acceptable; `200..<300` unless changed with ``validate(status:)``.
    public var acceptsStatus: @Sendable (Int) -> Bool
    /// The media types accepted for a non-empty body; `nil` accepts any.
    public var acceptableContentTypes: [MediaType]?
    /// Decodes the body of a response with an unacceptable status into an error value.
    public var errorBody: (@Sendable (Response) -> (any Error)?)?
    /// Turns an acceptable response into the value.
    public var transform: @Sendable (Response) throws -> Value

    /// Creates a decoder that accepts 2xx statuses and any content type.
    /// - Parameter transform: Turns an acceptable response into the value.
    public init(_ transform: @escaping @Sendable (Response) throws -> Value) {
        self.acceptsStatus = { (200..<300).contains($0) }
        self.acceptableContentTypes = nil
        self.errorBody = nil
        self.transform = transform
    }

    /// Checks the response and decodes it.
    /// - Parameters:
    ///   - response: The response.
    ///   - request: The request it answers, attached to any error (redacted).
    /// - Returns: The value.
    /// - Throws: ``CourierError`` with cause ``CourierError/Cause/unacceptableStatus(_:errorBody:)``,
    ///   ``CourierError/Cause/unacceptableContentType(expected:received:)`` or
    ///   ``CourierError/Cause/decodingFailed(_:)``.
    public func decode(_ response: Response, for request: Request? = nil) throws(CourierError) -> Value {
        guard acceptsStatus(response.status) else {
            throw CourierError(
                .unacceptableStatus(response.status, errorBody: errorBody?(response)), request: request,
                response: response)
        }
        if let acceptableContentTypes, !response.body.isEmpty {
            let received = response.contentType
            guard let received, acceptableContentTypes.contains(where: { $0.matches(received) }) else {
                throw CourierError(
                    .unacceptableContentType(expected: acceptableContentTypes, received: received), request: request,
                    response: response)
            }
        }
        do {
            return try transform(response)
        } catch let error as CourierError {
            throw error
        } catch {
            throw CourierError(
                .decodingFailed(
                    DecodingFailure(value: Value.self, error: error, body: response.body, redactor: BodyRedactor(request: request))),
                request: request, response: response, underlyingError: error)
        }
    }

    /// A copy that accepts only statuses in `range`.
    /// - Parameter range: The acceptable statuses, for example `200..<300` or `200...299`.
    /// - Returns: The new decoder.
    public func validate(status range: some RangeExpression<Int> & Sendable) -> ResponseDecoder {
        var copy = self
        copy.acceptsStatus = { range.contains($0) }
        return copy
    }

    /// A copy that accepts a non-empty body only when its `Content-Type` matches one of `types`.
    /// - Parameter types: The acceptable media types; `application/json` also accepts
    ///   `application/problem+json` and the like.
    /// - Returns: The new decoder.
    public func validate(contentType types: MediaType...) -> ResponseDecoder {
        var copy = self
        copy.acceptableContentTypes = types
        return copy
    }

    /// A decoder with the same checks whose value is transformed by `transform`.
    /// - Parameter transform: A pure function of the value.
    /// - Returns: The new decoder.
    public func map<NewValue>(_ transform: @escaping @Sendable (Value) -> NewValue) -> ResponseDecoder<NewValue> {
        tryMap(transform)
    }

    /// A decoder with the same checks whose value is transformed by a throwing function; an error
    /// it throws becomes ``CourierError/Cause/decodingFailed(_:)``.
    /// - Parameter transform: A function of the value.
    /// - Returns: The new decoder.
    public func tryMap<NewValue>(_ transform: @escaping @Sendable (Value) throws -> NewValue)
        -> ResponseDecoder<NewValue>
    {
        let original = self.transform
        var mapped = ResponseDecoder<NewValue> { response in try transform(original(response)) }
        mapped.acceptsStatus = acceptsStatus
        mapped.acceptableContentTypes = acceptableContentTypes
        mapped.errorBody = errorBody
        return mapped
    }
}
