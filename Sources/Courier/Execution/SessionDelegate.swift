import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The delegate of the session a ``URLSessionExecutor`` owns: collects each task's response and
/// body, applies Courier's redirect policy, and completes each task exactly once.
///
/// Owning the delegate is what lets Courier behave the same on every platform:
/// - **Redirects** drop credentials when they leave the original origin. FoundationNetworking on
///   Linux forwards `Authorization` and `Cookie` to any host a redirect names; Apple platforms
///   drop `Authorization`. Courier drops `Authorization`, `Proxy-Authorization`, `Cookie` and the
///   request's own sensitive headers (see ``Redaction``) on both, and keeps them dropped on
///   later hops.
/// - **401 with `WWW-Authenticate`**: FoundationNetworking (before the fix in
///   swift-corelibs-foundation#5457) never completes such a task when no credential is
///   available. Courier hands the 401 response back instead, as Apple platforms do.
final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    /// The most redirects followed for one request.
    static let maximumRedirects = 20

    private struct Record {
        var request: Request
        var origin: Origin?
        var response: HTTPURLResponse?
        var body = Data()
        var redirects = 0
        var leftOrigin = false
        var complete: (@Sendable (Result<Response, any Error>) -> Void)?
    }

    private let records = Locked<[Int: Record]>([:])

    /// Starts tracking `task`; `complete` is called exactly once.
    func register(
        _ task: URLSessionTask, for request: Request, complete: @escaping @Sendable (Result<Response, any Error>) -> Void
    ) {
        let origin = task.originalRequest?.url.flatMap(Origin.init)
        records.withLock { $0[task.taskIdentifier] = Record(request: request, origin: origin, complete: complete) }
    }

    /// Completes the task's record once; later calls do nothing.
    private func finish(_ task: URLSessionTask, with result: (inout Record) -> Result<Response, any Error>) {
        let (complete, outcome) = records.withLock { records -> ((@Sendable (Result<Response, any Error>) -> Void)?, Result<Response, any Error>?) in
            guard var record = records.removeValue(forKey: task.taskIdentifier) else { return (nil, nil) }
            return (record.complete, result(&record))
        }
        if let complete, let outcome { complete(outcome) }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        records.withLock { records in
            records[dataTask.taskIdentifier]?.response = response as? HTTPURLResponse
            records[dataTask.taskIdentifier]?.body = Data()
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        records.withLock { $0[dataTask.taskIdentifier]?.body.append(data) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        finish(task) { record in
            if let error { return .failure(error) }
            guard let response = record.response else { return .failure(URLError(.badServerResponse)) }
            return .success(Response(http: response, body: record.body))
        }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        enum Decision { case follow(URLRequest), fail(URLError) }
        let decision = records.withLock { records -> Decision in
            guard var record = records[task.taskIdentifier] else { return .follow(request) }
            record.redirects += 1
            guard record.redirects <= Self.maximumRedirects else { return .fail(URLError(.httpTooManyRedirects)) }
            guard let url = request.url, let target = Origin(url) else {
                return .fail(URLError(.redirectToNonExistentLocation))
            }
            if target != record.origin { record.leftOrigin = true }
            var next = request
            if record.leftOrigin {
                for name in Self.credentialHeaders(of: record.request, in: next) {
                    next.setValue(nil, forHTTPHeaderField: name)
                }
            }
            records[task.taskIdentifier] = record
            return .follow(next)
        }
        switch decision {
        case .follow(let next):
            completionHandler(next)
        case .fail(let error):
            finish(task) { _ in .failure(error) }
            completionHandler(nil)
            task.cancel()
        }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        #if canImport(FoundationNetworking)
            // Courier sends credentials itself; hand the 401 back instead of waiting for one.
            if let failure = challenge.failureResponse as? HTTPURLResponse {
                finish(task) { record in .success(Response(http: failure, body: record.body)) }
                completionHandler(.cancelAuthenticationChallenge, nil)
                return
            }
        #endif
        completionHandler(.performDefaultHandling, nil)
    }

    /// The header names to remove from a request that has left its origin.
    private static func credentialHeaders(of request: Request, in next: URLRequest) -> [String] {
        (next.allHTTPHeaderFields ?? [:]).keys.filter { name in
            let header = HeaderName(rawValue: name)
            return header == .authorization || header == .proxyAuthorization || header == .cookie
                || request.redaction.isSensitive(header: header)
        }
    }
}

/// Scheme, host and port: what must match for a redirect to stay on the same origin
/// ([RFC 6454](https://www.rfc-editor.org/rfc/rfc6454)).
struct Origin: Hashable {
    var scheme: String
    var host: String
    var port: Int

    init?(_ url: URL) {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host?.lowercased()
        else { return nil }
        self.scheme = scheme
        self.host = host
        self.port = url.port ?? (scheme == "https" ? 443 : 80)
    }
}
