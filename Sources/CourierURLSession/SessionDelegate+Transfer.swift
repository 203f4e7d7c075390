@_spi(Transports) import CourierCore
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
            /// The file the body was copied from and the length it had, while it is watched
            /// (until the body is sent).
            var watched: (file: URL, length: Int64)?
            /// Why the upload failed (its file grew, shrank or went away), when it did: the call
            /// fails with it however the task ends, and its response is never handed over.
            var uploadProblem: CourierError?
            /// The task was asked about a redirect and answered (not followed): its transfer is
            /// complete, and the answer completes the task; a cancel now could trap
            /// FoundationNetworking (see ``cancel()``).
            var redirectAnswered = false
            /// `cancel()` was called on the task: a redirect question that comes afterwards is
            /// left unanswered (see ``answersRedirect()``).
            var taskCancelled = false
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
            request: Request, uploadFile: URL?, watching: (file: URL, length: Int64)? = nil, bodyPipe: PipeBuffer?,
            options: StreamOptions, gathering: Bool = false,
            calls: SessionCalls, cleanup: @escaping @Sendable () -> Void, head: @escaping HeadCompletion
        ) {
            self.calls = calls
            self.gathering = gathering
            self.state = Locked(State(head: head, uploadFile: uploadFile, watched: watching))
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
        ///
        /// Nor is a task cancelled once it was asked about a redirect and answered: its
        /// transfer was complete when it asked, and the answer (not followed) completes it;
        /// FoundationNetworking takes the answer on the task's work queue after the delegate
        /// returns, and traps ("Received callback for HTTP redirection, but we're not waiting
        /// for it") when a cancel processed there first has moved the task on.
        func cancel() {
            let bodyOutstanding = bodyPipe?.abort() ?? false
            let task = state.withLock { state -> URLSessionTask? in
                state.cancelled = true
                guard !state.stopped, !state.completed else { return nil }
                state.stopped = true
                guard !bodyOutstanding, !state.redirectAnswered, let task = state.task else { return nil }
                state.taskCancelled = true
                return task
            }
            if let task { calls.cancel(task) }
        }

        /// Whether the delegate answers the task's redirect question: not when the task was
        /// cancelled (FoundationNetworking may have taken the cancel already, and an answer after
        /// it traps; the cancel completes the task). Once answered, the task is never cancelled
        /// (see ``cancel()``).
        func answersRedirect() -> Bool {
            state.withLock { state in
                guard !state.taskCancelled else { return false }
                state.redirectAnswered = true
                return true
            }
        }

        /// Holds a file body to the length it had when its upload started, as every transport
        /// does (``FramedBody``'s rule). The task sends a private copy made then (see
        /// `URLSessionTransport`), so what goes out never changes; the file itself is checked
        /// every 100 ms until the body is sent, and once more then. A file that grew, shrank or
        /// went away fails the call (the framing error; ``CourierError/Cause/fileFailure(_:)`` for
        /// one that went away) once the task ends, its response dropped. The task is never
        /// cancelled for it: cancelling a file upload mid-body can trap in FoundationNetworking
        /// (the Known limits article), and the copy is sent whole, exactly as announced.
        func watchUpload() {
            @Sendable func check() {
                guard state.withLock({ !$0.ended && !$0.stopped && $0.watched != nil }) else { return }
                if !uploadChanged(finally: false) {
                    DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + .milliseconds(100)) { check() }
                }
            }
            DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + .milliseconds(100)) { check() }
        }

        /// Whether the watched file no longer has its length (recording why); `finally` ends the
        /// watch.
        private func uploadChanged(finally: Bool) -> Bool {
            guard
                let (file, length) = state.withLock({ state -> (URL, Int64)? in
                    defer { if finally { state.watched = nil } }
                    return state.watched
                })
            else { return false }
            var info = stat()
            let size: Int64? = stat(file.path, &info) == 0 ? Int64(info.st_size) : nil
            if size == length { return false }
            let problem =
                size.map { FramedBody.mismatch(.file(file), length: length, read: $0 > length ? nil : $0) }
                ?? CourierError(.fileFailure("the file \(file.lastPathComponent.debugDescription) went away while it was uploaded"))
            state.withLock { state in
                if state.uploadProblem == nil { state.uploadProblem = problem }
                state.watched = nil
            }
            return true
        }

        /// The body is sent: its file is checked a last time, and no longer watched.
        func uploadSent() {
            _ = uploadChanged(finally: true)
        }

        /// Hands the head over once, with `body` (the body stream when `nil`) attached.
        func deliverHead(_ response: HTTPURLResponse, body: ByteStream? = nil) {
            guard
                let complete = state.withLock({ state -> HeadCompletion? in
                    // The answer to an upload whose file changed is not handed over (see `end`).
                    guard state.uploadProblem == nil else { return nil }
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
                let (complete, problem) = state.withLock({ state -> (HeadCompletion?, CourierError?)? in
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
            // An upload whose file changed fails, however the task ended.
            if let problem { failure = CourierError.wrapping(problem, request: request) }
            if let complete, let failure { complete(.failure(failure)) }
            channel.finish(failure)
            cleanup()
        }
    }
}
