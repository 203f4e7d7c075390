import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The delegate of the session a ``URLSessionTransport`` owns: collects each task's response and
/// body, applies the response size limit, and completes each task exactly once.
///
/// Owning the delegate is what lets Courier behave the same on every platform:
/// - **Redirects** are never followed by the session: the 3xx comes back as the response and the
///   ``Exchange`` decides under its ``RedirectPolicy``. (FoundationNetworking on Linux would
///   forward `Authorization` and `Cookie` to any host a redirect names.)
/// - **401 with `WWW-Authenticate`**: FoundationNetworking (before the fix in
///   swift-corelibs-foundation#5457) never completes such a task when no credential is
///   available. Courier hands the 401 response back instead, as Apple platforms do.
/// - **Size limit**: the body is counted as it arrives (after decompression) and the transfer is
///   stopped once it passes the limit.
final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    /// One hop: its data task, its body, its completion.
    private final class Hop: Sendable {
        struct State {
            var task: URLSessionTask?
            var body = Data()
            var cancelled = false
            /// The hop was stopped (cancelled, over the size limit): later chunks are dropped.
            var stopped = false
            var complete: (@Sendable (Result<Response, any Error>) -> Void)?
            /// Enforces a sub-second timeout, when the request has one.
            var watchdog: IdleWatchdog?
        }

        let state: Locked<State>
        let calls: SessionCalls

        init(calls: SessionCalls, complete: @escaping @Sendable (Result<Response, any Error>) -> Void) {
            state = Locked(State(complete: complete))
            self.calls = calls
        }

        /// Completes once; later calls do nothing.
        func finish(_ result: (State) -> Result<Response, any Error>) {
            let pending = state.withLock { state -> (@Sendable (Result<Response, any Error>) -> Void, Result<Response, any Error>)? in
                guard let complete = state.complete else { return nil }
                state.complete = nil
                return (complete, result(state))
            }
            if let (complete, outcome) = pending {
                state.withLock { $0.watchdog }?.stop()
                complete(outcome)
            }
        }

        var isFinished: Bool { state.withLock { $0.complete == nil } }

        /// Cancels the running task, once, off the calling thread (see ``SessionCalls``); what
        /// still arrives is dropped.
        func cancel() {
            let task = state.withLock { state -> URLSessionTask? in
                state.cancelled = true
                guard !state.stopped else { return nil }
                state.stopped = true
                return state.task
            }
            if let task { calls.cancel(task) }
        }
    }

    private let hops = Locked<[Int: Hop]>([:])
    /// 401s challenged on tasks Courier started with `data(for:)` (no `Hop`), by URL and
    /// method, for the caller whose task was cancelled to answer the challenge. At most 64 kept.
    private let challenged = Locked<[(url: URL?, method: String?, response: HTTPURLResponse)]>([])
    let maximumResponseSize: Int?
    /// Where this session's task calls that wait for its work queue are made.
    let calls = SessionCalls()

    init(maximumResponseSize: Int?) {
        self.maximumResponseSize = maximumResponseSize
    }

    /// Sends `urlRequest` (one hop: a redirect is the response) and calls `complete` exactly
    /// once. Returns an action that cancels the task.
    func start(
        _ urlRequest: URLRequest, for request: Request, on session: URLSession,
        complete: @escaping @Sendable (Result<Response, any Error>) -> Void
    ) -> @Sendable () -> Void {
        let hop = Hop(calls: calls, complete: complete)
        if let watchdog = IdleWatchdog.forRequest(request) {
            hop.state.withLock { $0.watchdog = watchdog }
            watchdog.start { [weak hop] in
                hop?.finish { _ in .failure(URLError(.timedOut)) }
                hop?.cancel()
            }
        }
        launch(urlRequest, for: hop, on: session)
        return { hop.cancel() }
    }

    /// Makes and starts the task on ``SessionCalls`` (both wait for the session's work
    /// queue, which must hold neither a Swift concurrency thread nor the delivery queue).
    private func launch(_ urlRequest: URLRequest, for hop: Hop, on session: URLSession) {
        let start: @Sendable () -> Void = { [self] in
            let task = session.dataTask(with: urlRequest)
            hops.withLock { $0[task.taskIdentifier] = hop }
            let cancelled = hop.state.withLock { state -> Bool in
                state.task = task
                state.watchdog?.touch()
                return state.cancelled
            }
            if cancelled {
                hops.withLock { _ = $0.removeValue(forKey: task.taskIdentifier) }
                hop.finish { _ in .failure(URLError(.cancelled)) }
                return
            }
            task.resume()
        }
        calls.run(start)
    }

    private func registered(for task: URLSessionTask) -> Hop? {
        hops.withLock { $0[task.taskIdentifier] }
    }

    private func tooLarge(_ hop: Hop) {
        guard let limit = maximumResponseSize else { return }
        hop.finish { _ in .failure(CourierError(.responseTooLarge(limit: limit))) }
        hop.cancel()
    }

    // No `didReceive response` method: each delegate call is an operation on the session's
    // delegate queue, and the response is read from the task when it completes.

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let hop = registered(for: dataTask) else { return }
        let limit = maximumResponseSize
        let overLimit = hop.state.withLock { state -> Bool in
            if state.stopped { return false }
            if let limit, state.body.count + data.count > limit {
                // Nothing more is kept: the body so far goes too.
                state.body = Data()
                return true
            }
            state.body.append(data)
            state.watchdog?.touch()
            return false
        }
        if overLimit { tooLarge(hop) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let hop = hops.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        hop.finish { state in
            if let error { return .failure(error) }
            guard let http = task.response as? HTTPURLResponse else { return .failure(URLError(.badServerResponse)) }
            let response = Response(http: http, body: state.body)
            if let failure = response.framingFailure(method: task.originalRequest?.httpMethod) {
                return .failure(CourierError(.transport(failure)))
            }
            return .success(response)
        }
    }

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
                if let hop = registered(for: task) {
                    hop.finish { state in .success(Response(http: failure, body: state.body)) }
                } else {
                    // A `data(for:)` task: its caller sees a cancellation and asks for this.
                    challenged.withLock { list in
                        if list.count >= 64 { list.removeFirst() }
                        list.append((task.originalRequest?.url, task.originalRequest?.httpMethod, failure))
                    }
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
