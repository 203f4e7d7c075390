import Foundation

/// Sends the cookies of a ``CookieStore`` with each request and stores what each response sets.
///
/// Put it around every hop (``Exchange/eachHop(_:)``, `URLSessionExecutor.eachHop`,
/// `AsyncHTTPClientExecutor.eachHop`): then a `Set-Cookie` on a `302` counts for the next hop,
/// and each hop gets the cookies of its own URL (none of the first origin's when a redirect
/// leaves it). Around a whole call (``Executor/with(_:)``) it sees the first request and the
/// last response only, which is what an executor that follows no redirects (``InMemoryExecutor``,
/// ``HARReplayExecutor``) has anyway.
///
/// The jar's cookies go after any `Cookie` field the request already has, in one field
/// (RFC 6265 §5.4). Refused `Set-Cookie` fields are ignored, as RFC 6265 says; the store's
/// ``CookieStore/store(setCookie:from:)`` reports why when you call it yourself. Works the
/// same under `send`, `stream` and `download`: it reads the head only.
///
/// Transports keep no cookies of their own: this is the only jar.
///
/// ```swift
/// let cookies = CookieStore()
/// let executor = URLSessionExecutor().eachHop(CookieMiddleware(cookies))
/// _ = try await executor.send(.post |> url(login) |> jsonBody(credentials))   // sets session=…
/// let me = try await executor.send(.get |> url(profile) |> decode(User.self)) // sends it
/// ```
public struct CookieMiddleware: Middleware {
    /// The store it reads and fills.
    public let store: CookieStore

    /// Creates the middleware.
    /// - Parameter store: The store to read and fill; share one between executors to share
    ///   their cookies.
    public init(_ store: CookieStore) {
        self.store = store
    }

    /// Adds the store's cookies for the request's URL, sends it, and stores the response's
    /// `Set-Cookie` fields.
    /// - Parameters:
    ///   - request: The request (of this hop, when run around each hop).
    ///   - next: The rest of the chain.
    /// - Returns: The response, unchanged.
    /// - Throws: What `next` throws.
    public func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
        // The URL is rendered only when a cookie may go out or come in: an empty jar and a
        // response without Set-Cookie cost a lock and one field lookup.
        var request = request
        var url: URL?
        if !store.isEmpty, let target = request.url, let cookies = store.cookieHeader(for: target) {
            url = target
            if let given = request.headers[.cookie], !given.isEmpty {
                request.headers.set(.cookie, given + "; " + cookies)
            } else {
                request.headers.set(.cookie, cookies)
            }
        }
        let response = try await next(request)
        if response.head.firstValue(of: .setCookie) != nil, let target = url ?? request.url {
            store.store(setCookie: response.headers.values(for: .setCookie), from: target)
        }
        return response
    }
}
