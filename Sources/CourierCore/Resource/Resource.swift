#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A request plus how to turn its response into a `Value`.
///
/// Make one by applying a ``ResponseDecoder`` to a request; send it with an ``Executor``. The
/// request stays inspectable, so a unit test can check exactly what would be sent without any
/// network:
///
/// ```swift
/// let users: Resource<[User]> = .get |> baseURL(api) |> path("users") |> decode([User].self)
/// #expect(try users.request.validatedURL().path == "/v1/users")
/// let list = try await URLSessionExecutor().send(users)
/// ```
public struct Resource<Value>: Sendable {
    /// The request to send.
    public var request: Request
    /// How its response becomes a value.
    public var decoder: ResponseDecoder<Value>

    /// Creates a resource.
    /// - Parameters:
    ///   - request: The request to send.
    ///   - decoder: How its response becomes a value.
    public init(request: Request, decoder: ResponseDecoder<Value>) {
        self.request = request
        self.decoder = decoder
    }

    /// Checks and decodes a response to this resource's request.
    /// - Parameter response: The response.
    /// - Returns: The value.
    /// - Throws: ``CourierError`` (see ``ResponseDecoder/decode(_:for:)``).
    public func decode(_ response: Response) throws(CourierError) -> Value {
        try decoder.decode(response, for: request)
    }

    /// A resource for the same request whose value is transformed by `transform`.
    /// - Parameter transform: A pure function of the value.
    /// - Returns: The new resource.
    public func map<NewValue>(_ transform: @escaping @Sendable (Value) -> NewValue) -> Resource<NewValue> {
        Resource<NewValue>(request: request, decoder: decoder.map(transform))
    }

    /// A resource whose value is transformed by a throwing function; its error becomes
    /// ``CourierError/Cause/decodingFailed(_:)``.
    /// - Parameter transform: A function of the value.
    /// - Returns: The new resource.
    public func tryMap<NewValue>(_ transform: @escaping @Sendable (Value) throws -> NewValue) -> Resource<NewValue> {
        Resource<NewValue>(request: request, decoder: decoder.tryMap(transform))
    }

    /// A resource that accepts only statuses in `range` (by default `200..<300`).
    /// - Parameter range: The acceptable statuses.
    /// - Returns: The new resource.
    public func validate(status range: some RangeExpression<Int> & Sendable = 200..<300) -> Resource {
        Resource(request: request, decoder: decoder.validate(status: range))
    }

    /// A resource that accepts a non-empty body only when its `Content-Type` matches one of `types`.
    /// - Parameter types: The acceptable media types.
    /// - Returns: The new resource.
    public func validate(contentType types: MediaType...) -> Resource {
        var copy = self
        copy.decoder.acceptableContentTypes = types
        return copy
    }

    /// A resource whose request is transformed by `builder`; the decoder is kept.
    /// - Parameter builder: The step to apply to the request.
    /// - Returns: The new resource.
    public func applying(_ builder: RequestBuilder) -> Resource {
        Resource(request: builder(request), decoder: decoder)
    }
}

/// Applies a builder to a resource's request, keeping its decoder:
/// `… |> decode(User.self) |> header("X-Trace", id)` works as if the header came first.
/// - Parameters:
///   - resource: The resource.
///   - builder: The step to apply to its request.
/// - Returns: The new resource; the same as ``Resource/applying(_:)``.
@inlinable @_disfavoredOverload
public func |> <Value>(resource: consuming Resource<Value>, builder: RequestBuilder) -> Resource<Value> {
    resource.applying(builder)
}

/// Pairs a request with a decoder: `request |> decode(User.self)` is a `Resource<User>`.
/// - Parameters:
///   - request: The request.
///   - decoder: How to decode its response.
/// - Returns: The resource.
@inlinable
public func |> <Value>(request: consuming Request, decoder: ResponseDecoder<Value>) -> Resource<Value> {
    Resource(request: request, decoder: decoder)
}
