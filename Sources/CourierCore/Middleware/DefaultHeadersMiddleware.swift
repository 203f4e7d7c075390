/// Adds headers to every request that does not already have them.
///
/// A header the request sets itself wins; names compare case-insensitively.
///
/// ```swift
/// let executor = URLSessionExecutor().with(
///     DefaultHeadersMiddleware([.userAgent: "MyApp/1.0", .accept: "application/json"]))
/// ```
public struct DefaultHeadersMiddleware: Middleware {
    /// The headers to add when missing.
    public var headers: HTTPHeaders

    /// Creates the middleware.
    /// - Parameter headers: The headers to add when missing.
    public init(_ headers: HTTPHeaders) {
        self.headers = headers
    }

    /// Adds the missing headers and sends the request on.
    /// - Parameters:
    ///   - request: The request.
    ///   - next: The rest of the chain.
    /// - Returns: The response.
    /// - Throws: Whatever `next` throws.
    public func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
        var request = request
        for field in headers where !request.headers.contains(field.name) {
            request.headers.add(field.name, field.value)
        }
        return try await next(request)
    }
}
