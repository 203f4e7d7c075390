import CourierCore
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The delegate of every session a ``URLSessionTransport`` owns. It answers the questions that keep
/// behaviour identical on Linux and Apple platforms, and feeds each hop's body into a ``ByteStream``.
///
/// - **Redirects** are never followed by the session: the task ends at the 3xx, which is the
///   response (FoundationNetworking drops its body), and the ``Exchange`` decides the next hop
///   under its ``RedirectPolicy``. (FoundationNetworking would forward `Authorization` and
///   `Cookie` to any host a redirect names, and drop the body of a 307/308.)
/// - **401 with `WWW-Authenticate`**: FoundationNetworking (before the fix in
///   swift-corelibs-foundation#5457) never completes such a task when no credential is
///   available. Courier cancels it and hands the 401 back instead, as Apple platforms do.
///
/// Each of a transport's sessions has a delegate of its own. The **buffered** session runs the
/// hops whose body is read whole, gathered (under the exchange's rules, when there are any) into
/// memory, so its work queue is never held long by them. The **streaming** session (made on
/// first use) feeds bounded streams that may spill to disk for a slow reader, and an upload of
/// unknown length gets a session of its own. Either way a task is made and resumed on
/// ``SessionCalls``, never on a Swift concurrency thread. FoundationNetworking cannot pause a
/// transfer (suspending a running task
/// removes it from libcurl, and resuming starts it again), so what a lagging reader has not taken
/// goes to the channel's spill file, within ``StreamOptions/spillLimit``; on every platform alike.
/// The ``Exchange`` holds every body to the size limit, the framing check and the idle timer.
final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    typealias HeadCompletion = @Sendable (Result<StreamedResponse, any Error>) -> Void

    private let transfers = Locked<[Int: Transfer]>([:])
    /// Where this session's task calls that wait for its work queue are made.
    let calls = SessionCalls()

    /// Sends `urlRequest` (uploading `uploadFile` when given, while the file its body came from
    /// is `watching`) and calls `head` once, with the streamed response or the failure before
    /// it. Returns an action that cancels the transfer.
    func start(
        _ urlRequest: URLRequest, for request: Request, uploadFile: URL?, watching: (file: URL, length: Int64)? = nil,
        bodyPipe: PipeBuffer? = nil, on session: URLSession,
        options: StreamOptions, gathering: Bool = false, cleanup: @escaping @Sendable () -> Void, head: @escaping HeadCompletion
    ) -> @Sendable () -> Void {
        let transfer = Transfer(
            request: request, uploadFile: uploadFile, watching: watching, bodyPipe: bodyPipe, options: options, gathering: gathering,
            calls: calls,
            cleanup: cleanup, head: head)
        // Weakly: the channel keeps its stop actions until a reader stops it, and a call cancelled
        // before its head never hands the channel to a reader, so a strong capture made a cycle
        // (transfer, channel, action) that kept every such call's chunks (found by the soak:
        // about 30 KiB per cancelled or timed-out call). While the task runs, the session's
        // transfer table holds the transfer.
        transfer.channel.onTermination { [weak transfer] in transfer?.cancel() }
        launch(urlRequest, for: transfer, on: session)
        return { transfer.cancel() }
    }

    /// Makes and starts the task on ``SessionCalls``: making and resuming a task waits for the
    /// session's work queue, which must never hold the delivery queue (see `DeliveryQueue`) nor
    /// a Swift concurrency thread. FoundationNetworking runs every session's work on one shared
    /// queue, which libcurl's read of a body pipe holds until the pipe's producer (a Swift task)
    /// writes: a call that waited there on each of the two concurrency threads left no thread for
    /// any producer, and nothing ever finished (ConcurrencyTests).
    private func launch(_ urlRequest: URLRequest, for transfer: Transfer, on session: URLSession) {
        let start: @Sendable () -> Void = { [self] in
            // A call cancelled before its turn here makes no task: its session may be going away.
            guard !transfer.state.withLock({ $0.cancelled }) else { return transfer.end(URLError(.cancelled)) }
            let file = transfer.state.withLock { $0.uploadFile }
            let task: URLSessionTask
            if let file {
                task = session.uploadTask(with: urlRequest, fromFile: file)
                transfer.watchUpload()
            } else {
                task = session.dataTask(with: urlRequest)
            }
            transfers.withLock { $0[task.taskIdentifier] = transfer }
            let cancelled = transfer.state.withLock { state -> Bool in
                state.task = task
                return state.cancelled
            }
            if cancelled {
                transfers.withLock { _ = $0.removeValue(forKey: task.taskIdentifier) }
                transfer.end(URLError(.cancelled))
                return
            }
            task.resume()
        }
        calls.run(start)
    }

    private func transfer(for task: URLSessionTask) -> Transfer? {
        transfers.withLock { $0[task.taskIdentifier] }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        // FoundationNetworking ignores the disposition; the transfer is stopped by cancelling.
        completionHandler(.allow)
        guard let transfer = transfer(for: dataTask) else { return }
        transfer.timings?.mark(.firstByte)
        guard let http = response as? HTTPURLResponse else { return }
        // A gathered body's head goes out with the body; its rules learn it now, so that a body
        // they stop at the size limit fails with the status and fields.
        guard !transfer.gathering else { return transfer.channel.noteHead(Response(http: http, body: Data())) }
        transfer.deliverHead(http)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let transfer = transfer(for: dataTask) else { return }
        // One lock per chunk on the common path; the head is looked up only until it is out.
        let (skip, needsHead) = transfer.state.withLock { state -> (Bool, Bool) in
            // Stopped, or the answer to an upload whose file changed (dropped; see `Transfer.end`).
            if state.stopped || state.uploadProblem != nil { return (true, false) }
            return (false, !state.headDelivered && !transfer.gathering)
        }
        guard !skip else { return }
        if needsHead, let http = dataTask.response as? HTTPURLResponse { transfer.deliverHead(http) }
        if !transfer.channel.yield(data) { transfer.cancel() }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        guard let transfer = transfer(for: task) else { return }
        if totalBytesExpectedToSend > 0, totalBytesSent >= totalBytesExpectedToSend {
            transfer.uploadSent()
            transfer.timings?.mark(.requestSent)
        }
        transfer.progress?.update(completed: totalBytesSent, expected: totalBytesExpectedToSend > 0 ? totalBytesExpectedToSend : nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let transfer = transfers.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        transfer.state.withLock { $0.completed = true }
        transfer.timings?.mark(.bodyEnded)
        if let error { return transfer.end(error) }
        guard let response = task.response as? HTTPURLResponse else { return transfer.end(URLError(.badServerResponse)) }
        // A gathered body is complete before its head goes out: it is handed over in hand (the
        // exchange checks its framing at once and the caller reads it without a wait), or, if
        // the rules stopped it meanwhile, as the stream that ends with their error.
        if transfer.gathering {
            transfer.channel.finish()
            if let body = transfer.channel.takeFinished() { transfer.deliverHead(response, body: ByteStream(body)) }
        }
        transfer.deliverHead(response)
        transfer.end(nil)
    }

    /// What the platform measured of the task (Apple platforms: DNS, connect, TLS, reuse, the
    /// protocol; FoundationNetworking reports none of it), into the hop's timings.
    func urlSession(_ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics) {
        guard let timings = transfer(for: task)?.timings, let metrics = metrics.transactionMetrics.last else { return }
        timings.record(metrics)
    }

    /// The session never follows a redirect: the task ends at the 3xx, which is the response
    /// (FoundationNetworking drops its body), and the ``Exchange`` decides the next hop (a new task).
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        // FoundationNetworking set the task waiting for this answer before it asked, and traps
        // if a cancel moved it on before the answer is taken: a cancelled task is not answered
        // (the cancel completes it), and an answered one is not cancelled (the answer does).
        guard transfer(for: task)?.answersRedirect() ?? true else { return }
        completionHandler(nil)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        #if canImport(FoundationNetworking)
            // Courier sends credentials itself; hand the 401 back instead of waiting for one.
            if let failure = challenge.failureResponse as? HTTPURLResponse,
                let transfer = transfers.withLock({ $0.removeValue(forKey: task.taskIdentifier) })
            {
                transfer.deliverHead(failure)
                transfer.end(nil)
                // FoundationNetworking answers `.cancelAuthenticationChallenge` with
                // `task.cancel()`, which waits for the work queue this call may be running on.
                calls.run { completionHandler(.cancelAuthenticationChallenge, nil) }
                return
            }
        #endif
        // Default handling may suspend, resume or cancel the task: each waits for the work queue.
        calls.run { completionHandler(.performDefaultHandling, nil) }
    }
}

extension StreamedResponse {
    /// The head of Foundation's response with `body` attached.
    init(http: HTTPURLResponse, body: ByteStream) {
        // Foundation's headers stay unconverted until read.
        self.init(head: Response(http: http, body: Data()), body: body)
    }
}
