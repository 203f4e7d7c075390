import Dispatch
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The reader's side: taking chunks (batched for a reader that asks for a minimum), polling, and
/// stopping the stream.
extension StreamChannel {
    /// Stops the stream at once: buffered chunks are dropped, a waiting read throws `error`, the
    /// producer is told to stop. Does nothing once the consumer has read the end.
    package func terminate(_ error: CourierError) {
        var timer: IdleTimer?
        var sink: (any ChunkSink)?
        let stopped = state.withLock { state -> (reader: UnsafeContinuation<Data?, any Error>?, writer: WaitingProducer?, actions: [@Sendable (CourierError) -> Void])? in
            guard !state.terminated else { return nil }
            timer = state.rules?.timer
            state.terminated = true
            state.stopError = error
            state.chunks = []
            state.head = 0
            state.buffered = 0
            state.dropSpill()
            if !state.endSeen { state.end = .failed(error) }
            sink = state.sink.take()
            state.sinkTurn = .ended
            let actions = state.onTermination
            state.onTermination = []
            return (state.reader.take(), state.writer.take(), actions)
        }
        timer?.stop()
        guard let stopped else { return }
        stopped.writer?.resume(false)
        sink?.streamEnded(error)
        for action in stopped.actions { action(error) }
        stopped.reader?.resume(throwing: error)
    }

    /// The next chunk, `nil` at the end; throws the stream's error, or ``CourierError/Cause/cancelled``
    /// when the reading task is cancelled (which also stops the transfer). Runs on `actor` (the
    /// reader's, for example the main actor) without hopping off it: a chunk that is ready is
    /// taken at once, and a wait suspends the reader where it is.
    ///
    /// A reader that pays per wake-up more than per byte (a download writing to disk) passes
    /// `minimum`: when it has to wait, it is woken once that many bytes are buffered (at most the
    /// buffer limit), at the end, when the stream stops, or ``holdLimit`` after it began to wait
    /// (a timer sees to that when no further chunk comes), whichever comes first,
    /// rather than for every chunk; it then takes the first chunk here and the rest with
    /// ``poll()``.
    func next(isolation actor: isolated (any Actor)?, atLeast minimum: Int = 0) async throws(CourierError) -> Data? {
        enum Ready {
            case chunk(Taken, writer: WaitingProducer?)
            case end(CourierError?)
        }
        func take(_ state: inout State) -> Ready? {
            if let taken = state.pop() {
                let writer = state.buffered <= limit / 2 ? state.writer.take() : nil
                return .chunk(taken, writer: writer)
            }
            switch state.end {
            case .finished?: return .end(nil)
            case .failed(let error)?: return .end(error)
            case nil: return nil
            }
        }
        /// Resumes a waiting producer, and reads a spill range outside the lock.
        func settle(_ ready: Ready) -> Result<Data?, CourierError> {
            switch ready {
            case .chunk(let taken, let writer):
                writer?.resume(true)
                guard let bytes = taken.bytes() else {
                    terminate(Self.spillFailure)
                    return .failure(Self.spillFailure)
                }
                return .success(bytes)
            case .end(let error?): return .failure(error)
            case .end(nil): return .success(nil)
            }
        }
        let result: Result<Data?, CourierError>
        if let ready = state.withLock(take) {
            result = settle(ready)
        } else {
            do {
                // The continuation is parked and taken only under the lock, and resumed exactly
                // once, by whoever took it: a producer (often before this closure has returned,
                // which Swift allows), `terminate`, or this closure. ThreadSanitizer reports that
                // early resume against this task's later use of its frame: a false positive of the
                // runtime's fast path, explained in scripts/tsan-suppressions.txt.
                let chunk = try await withTaskCancellationHandler(
                    operation: {
                        try await withUnsafeThrowingContinuation(isolation: actor) { (reader: UnsafeContinuation<Data?, any Error>) in
                            let ready = state.withLock { state -> Ready? in
                                if let ready = take(&state) { return ready }
                                state.reader = reader
                                state.readerMinimum = min(minimum, limit)
                                if minimum > 0 { state.readerSince = DispatchTime.now().uptimeNanoseconds }
                                return nil
                            }
                            guard let ready else { return }
                            reader.resume(with: settle(ready).mapError { $0 as any Error })
                        }
                    },
                    onCancel: {
                        self.terminate(CourierError(.cancelled))
                    },
                    isolation: actor)
                result = .success(chunk)
            } catch {
                result = .failure(CourierError.wrapping(error, request: nil))
            }
        }
        switch result {
        case .success(let chunk?):
            return chunk
        case .success(nil):
            state.withLock { $0.endSeen = true }
            return nil
        case .failure(let error):
            state.withLock { $0.endSeen = true }
            throw error
        }
    }

    /// The next chunk if one is ready now, without waiting; `nil` when none is (the end and
    /// errors are left for ``next()``). For readers that gather several chunks at once.
    func poll() -> Data? {
        let ready = state.withLock { state -> (Taken, WaitingProducer?)? in
            guard let taken = state.pop() else { return nil }
            return (taken, state.buffered <= limit / 2 ? state.writer.take() : nil)
        }
        guard let (taken, writer) = ready else { return nil }
        writer?.resume(true)
        guard let bytes = taken.bytes() else {
            terminate(Self.spillFailure)
            return nil
        }
        return bytes
    }
}
