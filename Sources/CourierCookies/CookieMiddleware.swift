import CourierCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

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
/// (RFC 6265 §5.4). Refused `Set-Cookie` fields are ignored, as RFC 6265 says, and told to
/// `rejected` when you pass it (a cookie your server sets that never comes back is otherwise
/// hard to see): send them to your log. Works the same under `send`, `stream` and `download`:
/// it reads the head only.
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
    /// Told of each `Set-Cookie` field the jar refused: why, and the host that sent it.
    public let rejected: (@Sendable (CookieRejection, _ host: String) -> Void)?

    /// Creates the middleware.
    /// - Parameters:
    ///   - store: The store to read and fill; share one between executors to share their
    ///     cookies.
    ///   - rejected: Told of each refused `Set-Cookie` field: why (``CookieRejection`` never
    ///     holds the cookie's value) and the host that sent it. For a log:
    ///     `CookieMiddleware(store) { why, host in logger.notice("cookie from \(host) refused: \(why)") }`.
    public init(_ store: CookieStore, rejected: (@Sendable (CookieRejection, _ host: String) -> Void)? = nil) {
        self.store = store
        self.rejected = rejected
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
            let rejections = store.store(setCookie: response.headers.values(for: .setCookie), from: target)
            if let rejected, !rejections.isEmpty {
                let host = target.host(percentEncoded: true) ?? ""
                for rejection in rejections { rejected(rejection, host) }
            }
        }
        return response
    }
}
