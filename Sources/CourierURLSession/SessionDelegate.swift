import CourierCore
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The delegate of the session a ``URLSessionTransport`` sends buffered hops on (with
/// `data(for:)`): it only answers the two questions that keep behaviour identical on Linux and
/// Apple platforms.
///
/// - **Redirects** are never followed by the session: the 3xx comes back as the response and the
///   ``Exchange`` decides under its ``RedirectPolicy``. (FoundationNetworking on Linux would
///   forward `Authorization` and `Cookie` to any host a redirect names.)
/// - **401 with `WWW-Authenticate`**: FoundationNetworking (before the fix in
///   swift-corelibs-foundation#5457) never completes such a task when no credential is
///   available. Courier cancels it and hands the 401 back instead, as Apple platforms do.
final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    /// 401s challenged on tasks Courier started with `data(for:)`, by URL and method, for the
    /// caller whose task was cancelled to answer the challenge. At most 64 kept.
    private let challenged = Locked<[(url: URL?, method: String?, response: HTTPURLResponse)]>([])
    /// Where this session's task calls that wait for its work queue are made.
    let calls = SessionCalls()

    /// The session never follows a redirect: the task ends at the 3xx, which is its response,
    /// and the ``Exchange`` decides the next hop (a new task). FoundationNetworking would drop the
    /// body of a 307/308 redirect (it sends `Content-Length: 0`) and forward credentials to any
    /// host.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        #if canImport(FoundationNetworking)
            // Courier sends credentials itself; hand the 401 back instead of waiting for one.
            if let failure = challenge.failureResponse as? HTTPURLResponse {
                // The task's caller sees a cancellation and asks for this.
                challenged.withLock { list in
                    if list.count >= 64 { list.removeFirst() }
                    list.append((task.originalRequest?.url, task.originalRequest?.httpMethod, failure))
                }
                // FoundationNetworking answers `.cancelAuthenticationChallenge` with
                // `task.cancel()`, which waits for the work queue this call may be running on.
                calls.run { completionHandler(.cancelAuthenticationChallenge, nil) }
                return
            }
        #endif
        // Default handling may suspend, resume or cancel the task: each waits for the work queue.
        calls.run { completionHandler(.performDefaultHandling, nil) }
    }

    /// The challenged 401 recorded for a `data(for:)` request to `url` with `method`, if any.
    func takeChallenged(_ request: URLRequest) -> HTTPURLResponse? {
        challenged.withLock { list in
            guard let index = list.firstIndex(where: { $0.url == request.url && ($0.method ?? "GET") == (request.httpMethod ?? "GET") })
            else { return nil }
            return list.remove(at: index).response
        }
    }
}
