import CourierCore
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension SessionDelegate {
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
        /// Where the hop's timings go, when something reads them.
        let timings: HopTimings.Recorder?

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
            self.timings = options.timings
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

        /// Hands the head over once, with `body` (the body stream when `nil`) attached.
        func deliverHead(_ response: HTTPURLResponse, body: ByteStream? = nil) {
            guard
                let complete = state.withLock({ state in
                    defer {
                        state.head = nil
                        state.headDelivered = true
                    }
                    return state.head
                })
            else { return }
            complete(.success(StreamedResponse(http: response, body: body ?? ByteStream(channel: channel))))
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
}
