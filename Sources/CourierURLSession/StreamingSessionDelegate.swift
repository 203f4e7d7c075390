import CourierCore
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The delegate of the session a ``URLSessionTransport`` streams with: hands each task's head over
/// as soon as it arrives and its body chunk by chunk into a bounded ``ByteStream``, with the same
/// redirect (never followed: the 3xx is the response) and 401 rules as ``SessionDelegate``. The
/// ``Exchange`` holds the body to the size limit, the framing check and the idle timer.
///
/// A separate session (made on first use) keeps the buffered path free of the per-response
/// callback a stream needs. FoundationNetworking cannot pause a transfer (suspending a running
/// task removes it from libcurl, and resuming starts it again), so what a lagging reader has not
/// taken goes to the channel's spill file, within ``StreamOptions/spillLimit``; on every
/// platform alike.
final class StreamingSessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    typealias HeadCompletion = @Sendable (Result<StreamedResponse, any Error>) -> Void

    /// One hop: its task, feeding one body.
    final class Transfer: Sendable {
        struct State {
            var task: URLSessionTask?
            var head: HeadCompletion?
            var cancelled = false
            /// The transfer was stopped (by the reader, a limit, a failure): chunks that still
            /// arrive are dropped without being looked at, and the task is cancelled only once.
            var stopped = false
            var headDelivered = false
            /// The file the task uploads.
            var uploadFile: URL?
            /// Whether the upload file is still watched for shrinking (until its body is sent).
            var watchingUpload = false
            /// Why the upload stopped early (its file shrank or went away), when it did.
            var uploadProblem: String?
            var ended = false
            /// URLSession reported the task complete: it must not be cancelled any more
            /// (FoundationNetworking traps when a cancel races the task's completion).
            var completed = false
        }

        let state: Locked<State>
        let channel: StreamChannel
        let request: Request
        let progress: TransferProgress?
        let cleanup: @Sendable () -> Void
        /// A body being produced while it is sent; aborted on cancellation (see ``cancel()``).
        let bodyPipe: PipeBuffer?
        let calls: SessionCalls
        /// The head is handed over only once the body is complete (a body gathered whole).
        let gathering: Bool

        init(
            request: Request, uploadFile: URL?, bodyPipe: PipeBuffer?, options: StreamOptions, gathering: Bool = false,
            calls: SessionCalls, cleanup: @escaping @Sendable () -> Void, head: @escaping HeadCompletion
        ) {
            self.calls = calls
            self.gathering = gathering
            self.state = Locked(State(head: head, uploadFile: uploadFile))
            // A gathered body waits whole in memory for its reader, held to the rules from its
            // first byte.
            self.channel = StreamChannel(limit: gathering ? .max : options.bufferLimit, spillLimit: options.spillLimit)
            if let rules = options.rules { channel.enforce(rules) }
            self.request = request
            self.progress = options.uploadProgress
            self.cleanup = cleanup
            self.bodyPipe = bodyPipe
        }

        /// Stops the transfer: whatever arrives afterwards is dropped unread, and the task is
        /// cancelled once, off the calling thread (see ``SessionCalls``).
        ///
        /// A body still being produced is aborted instead: libcurl's next read of it fails (a
        /// blocked read at once), and libcurl ends the transfer itself, without the last chunk,
        /// so the server never takes the start of the body for all of it. The task is then left
        /// alone: cancelling it as well races FoundationNetworking into completing it twice,
        /// which traps in its task registry. Only a reader that already had the whole body (the
        /// response is under way) needs the task cancelled.
        func cancel() {
            let bodyOutstanding = bodyPipe?.abort() ?? false
            let task = state.withLock { state -> URLSessionTask? in
                state.cancelled = true
                guard !state.stopped, !state.completed else { return nil }
                state.stopped = true
                return state.task
            }
            if let task, !bodyOutstanding { calls.cancel(task) }
        }

        /// Checks the size of the file the task uploads every 100 ms until its body is
        /// sent: URLSession announced the size the file had at the start, and on
        /// FoundationNetworking a file that then shrinks leaves the transfer waiting for bytes
        /// that never come. A shrunk (or vanished) file stops the transfer with
        /// ``CourierError/Cause/fileFailure(_:)``; one that grows is sent at its announced size.
        func watchUpload(of file: URL, announced: Int64) {
            state.withLock { $0.watchingUpload = true }
            let name = file.lastPathComponent.debugDescription
            @Sendable func check() {
                guard state.withLock({ !$0.ended && !$0.stopped && $0.watchingUpload }) else { return }
                var info = stat()
                let size: Int64? = stat(file.path, &info) == 0 ? Int64(info.st_size) : nil
                if let size, size >= announced {
                    DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + .milliseconds(100)) { check() }
                    return
                }
                let problem =
                    size.map { "the file \(name) shrank while it was uploaded: \($0) of the \(announced) bytes announced" }
                    ?? "the file \(name) went away while it was uploaded"
                state.withLock { $0.uploadProblem = problem }
                cancel()
            }
            DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + .milliseconds(100)) { check() }
        }

        /// The body is sent: its file no longer matters.
        func uploadSent() {
            state.withLock { $0.watchingUpload = false }
        }

        /// Hands the head over once, with the body stream attached.
        func deliverHead(_ response: HTTPURLResponse) {
            guard
                let complete = state.withLock({ state in
                    defer {
                        state.head = nil
                        state.headDelivered = true
                    }
                    return state.head
                })
            else { return }
            complete(.success(StreamedResponse(http: response, body: ByteStream(channel: channel))))
        }

        /// Ends the exchange: a failure before the head fails the call, after it the body.
        func end(_ error: (any Error)?) {
            guard
                let (complete, problem) = state.withLock({ state -> (HeadCompletion?, String?)? in
                    guard !state.ended else { return nil }
                    defer {
                        state.head = nil
                        state.ended = true
                    }
                    return (state.head, state.uploadProblem)
                })
            else { return }
            var failure = error.map { URLSessionErrors.courierError(for: $0, request: request) }
            // A body the exchange's rules stopped (too large, idle) fails with their error, not
            // with the cancellation that stopped the task.
            if error != nil, let stopped = channel.stopError, !stopped.isReaderStop { failure = stopped }
            // An upload stopped because its file shrank says so.
            if error != nil, let problem { failure = CourierError(.fileFailure(problem), request: request) }
            if let complete, let failure { complete(.failure(failure)) }
            channel.finish(failure)
            cleanup()
        }
    }

    private let transfers = Locked<[Int: Transfer]>([:])
    /// Where this session's task calls that wait for its work queue are made.
    let calls = SessionCalls()

    /// Sends `urlRequest` (uploading `uploadFile` when given) and calls `head` once, with the
    /// streamed response or the failure before it. Returns an action that cancels the transfer.
    func start(
        _ urlRequest: URLRequest, for request: Request, uploadFile: URL?, bodyPipe: PipeBuffer? = nil, on session: URLSession,
        options: StreamOptions, gathering: Bool = false, cleanup: @escaping @Sendable () -> Void, head: @escaping HeadCompletion
    ) -> @Sendable () -> Void {
        let transfer = Transfer(
            request: request, uploadFile: uploadFile, bodyPipe: bodyPipe, options: options, gathering: gathering, calls: calls,
            cleanup: cleanup, head: head)
        transfer.channel.onTermination { transfer.cancel() }
        launch(urlRequest, for: transfer, on: session)
        return { transfer.cancel() }
    }

    /// Makes and starts the task on ``SessionCalls``: making and resuming a task waits
    /// for the session's work queue, which must hold neither a Swift concurrency thread nor the
    /// delivery queue (see `DeliveryQueue`).
    private func launch(_ urlRequest: URLRequest, for transfer: Transfer, on session: URLSession) {
        let start: @Sendable () -> Void = { [self] in
            // A call cancelled before its turn here makes no task: its session may be going away.
            guard !transfer.state.withLock({ $0.cancelled }) else { return transfer.end(URLError(.cancelled)) }
            let file = transfer.state.withLock { $0.uploadFile }
            let task: URLSessionTask
            if let file {
                task = session.uploadTask(with: urlRequest, fromFile: file)
                let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.int64Value
                if let announced = urlRequest.value(forHTTPHeaderField: "Content-Length").flatMap({ Int64($0) }) ?? size {
                    transfer.watchUpload(of: file, announced: announced)
                }
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
        guard let transfer = transfer(for: dataTask), !transfer.gathering, let http = response as? HTTPURLResponse else { return }
        transfer.deliverHead(http)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let transfer = transfer(for: dataTask) else { return }
        // One lock per chunk on the common path; the head is looked up only until it is out.
        let (skip, needsHead) = transfer.state.withLock { state -> (Bool, Bool) in
            if state.stopped { return (true, false) }
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
        if totalBytesExpectedToSend > 0, totalBytesSent >= totalBytesExpectedToSend { transfer.uploadSent() }
        transfer.progress?.update(completed: totalBytesSent, expected: totalBytesExpectedToSend > 0 ? totalBytesExpectedToSend : nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let transfer = transfers.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        transfer.state.withLock { $0.completed = true }
        if let error { return transfer.end(error) }
        guard let response = task.response as? HTTPURLResponse else { return transfer.end(URLError(.badServerResponse)) }
        // A gathered body is complete before its head goes out: the caller reads it without a wait.
        if transfer.gathering { transfer.channel.finish() }
        transfer.deliverHead(response)
        transfer.end(nil)
    }

    /// The session never follows a redirect: the task ends at the 3xx, which is the response
    /// (FoundationNetworking drops its body), and the ``Exchange`` decides the next hop.
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
