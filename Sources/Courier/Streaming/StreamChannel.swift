import Foundation

/// The bounded buffer between the producer of a streamed body (a transport, a stub, a replay) and
/// its one consumer.
///
/// Memory is bounded by `limit` bytes (plus one chunk): a producer that can wait (``send(_:)``)
/// is suspended until the consumer has read half of the buffer. A producer that cannot
/// (``yield(_:)``, called from a URLSession delegate: FoundationNetworking offers no way to pause
/// a transfer) has what does not fit written, in order, to an unlinked temporary file of at most
/// `spillLimit` bytes, read back as the consumer catches up; past that, the stream ends with
/// ``CourierError/Cause/slowConsumer(bufferLimit:)``.
///
/// Two ends are distinct: the producer *finishes* (queued behind the chunks still buffered, so
/// the consumer reads every byte first), while the consumer side *terminates* (cancellation,
/// overflow, a deadline: at once, buffered chunks dropped, the producer told to stop).
final class StreamChannel: Sendable {
    enum End {
        case finished
        case failed(CourierError)
    }

    /// Watches what the consumer reads; see ``ByteStream/observing(chunk:end:)``.
    struct Observer: Sendable {
        var chunk: @Sendable (Data) -> Void
        var end: @Sendable (CourierError?) -> Void
    }

    private struct State {
        var chunks: [Data] = []
        var head = 0
        var buffered = 0
        /// Set once; delivered to the consumer after the buffered chunks.
        var end: End?
        /// The consumer is gone or the stream was stopped: no more chunks are accepted.
        var terminated = false
        var reader: UnsafeContinuation<Data?, any Error>?
        var writer: UnsafeContinuation<Bool, Never>?
        var onTermination: [@Sendable () -> Void] = []
        var observers: [Observer] = []
        var observersEnded = false
        var spill: SpillFile?

        mutating func pop() -> Data? {
            guard head < chunks.count else {
                // The memory buffer holds the older bytes; the spill file the newer ones.
                guard let spill, spill.pending > 0 else { return nil }
                if let data = spill.read(upTo: 1 << 20) { return data }
                self.spill = nil
                end = .failed(CourierError(.transport(TransportFailure(.other, message: "the stream's spill file could not be read"))))
                return nil
            }
            let chunk = chunks[head]
            chunks[head] = Data()
            head += 1
            buffered -= chunk.count
            if head == chunks.count {
                chunks.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 64, head * 2 >= chunks.count {
                chunks.removeFirst(head)
                head = 0
            }
            return chunk
        }
    }

    /// The most bytes buffered before the producer must wait (or the stream ends).
    let limit: Int
    /// The most bytes spilled to disk when the consumer falls behind a producer that cannot wait.
    let spillLimit: Int64
    private let state = Locked(State())

    init(limit: Int, spillLimit: Int64 = 0) {
        self.limit = max(1, limit)
        self.spillLimit = max(0, spillLimit)
    }

    // MARK: Producer

    /// Buffers `chunk` without waiting. Returns `false` when the stream no longer accepts chunks
    /// (the consumer is gone, or this chunk overflowed the buffer and ended the stream): the
    /// producer should stop.
    @discardableResult
    func yield(_ chunk: Data) -> Bool {
        guard !chunk.isEmpty else { return !isClosed }
        enum Step {
            case rejected
            case handOver(UnsafeContinuation<Data?, any Error>)
            case buffered
            case overflow
        }
        let step = state.withLock { state -> Step in
            guard !state.terminated, state.end == nil else { return .rejected }
            if let reader = state.reader {
                state.reader = nil
                return .handOver(reader)
            }
            let spilling = (state.spill?.pending ?? 0) > 0
            if spilling || (state.buffered > 0 && state.buffered + chunk.count > limit) {
                guard spillLimit > 0, (state.spill?.pending ?? 0) + Int64(chunk.count) <= spillLimit else { return .overflow }
                if state.spill == nil { state.spill = SpillFile() }
                guard let spill = state.spill, spill.append(chunk) else { return .overflow }
                return .buffered
            }
            state.chunks.append(chunk)
            state.buffered += chunk.count
            return .buffered
        }
        switch step {
        case .rejected: return false
        case .handOver(let reader):
            reader.resume(returning: chunk)
            return true
        case .buffered: return true
        case .overflow:
            terminate(CourierError(.slowConsumer(bufferLimit: limit)))
            return false
        }
    }

    /// Buffers `chunk`, first waiting (without blocking a thread) while the buffer is full.
    /// Returns `false` when the stream no longer accepts chunks.
    func send(_ chunk: Data) async -> Bool {
        guard !chunk.isEmpty else { return !isClosed }
        while true {
            let full = state.withLock { state -> Bool? in
                guard !state.terminated, state.end == nil else { return nil }
                return state.reader == nil && state.buffered > 0 && state.buffered + chunk.count > limit
            }
            guard let full else { return false }
            if !full { return yield(chunk) }
            let open = await withUnsafeContinuation { (writer: UnsafeContinuation<Bool, Never>) in
                let resumeNow = state.withLock { state -> Bool? in
                    if state.terminated || state.end != nil { return false }
                    if state.buffered + chunk.count <= limit || state.buffered == 0 { return true }
                    state.writer = writer
                    return nil
                }
                if let resumeNow { writer.resume(returning: resumeNow) }
            }
            if !open { return false }
        }
    }

    /// Ends the stream after the buffered chunks: normally, or with `error`.
    func finish(_ error: CourierError? = nil) {
        let (reader, writer) = state.withLock { state -> (UnsafeContinuation<Data?, any Error>?, UnsafeContinuation<Bool, Never>?) in
            guard state.end == nil, !state.terminated else { return (nil, nil) }
            state.end = error.map(End.failed) ?? .finished
            guard state.head == state.chunks.count, (state.spill?.pending ?? 0) == 0 else { return (nil, state.writer.take()) }
            return (state.reader.take(), state.writer.take())
        }
        writer?.resume(returning: false)
        guard let reader else { return }
        if let error { reader.resume(throwing: error) } else { reader.resume(returning: nil) }
        endObservers(error)
    }

    /// Registers an action run once when the stream is stopped from the consumer's side
    /// (cancelled, overflowed, timed out, dropped unread): the producer's cue to stop the transfer.
    /// Runs at once if the stream is already stopped.
    func onTermination(_ action: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { state -> Bool in
            guard !state.terminated else { return true }
            state.onTermination.append(action)
            return false
        }
        if runNow { action() }
    }

    /// Whether the stream has ended or been stopped, so a producer can stop early.
    var isClosed: Bool { state.withLock { $0.terminated || $0.end != nil } }

    // MARK: Consumer

    /// Stops the stream at once: buffered chunks are dropped, a waiting read throws `error`, the
    /// producer is told to stop. Does nothing once the consumer has read the end.
    func terminate(_ error: CourierError) {
        let stopped = state.withLock { state -> (reader: UnsafeContinuation<Data?, any Error>?, writer: UnsafeContinuation<Bool, Never>?, actions: [@Sendable () -> Void])? in
            guard !state.terminated else { return nil }
            state.terminated = true
            state.chunks = []
            state.head = 0
            state.buffered = 0
            state.spill = nil
            if !state.observersEnded { state.end = .failed(error) }
            let actions = state.onTermination
            state.onTermination = []
            return (state.reader.take(), state.writer.take(), actions)
        }
        guard let stopped else { return }
        stopped.writer?.resume(returning: false)
        for action in stopped.actions { action() }
        stopped.reader?.resume(throwing: error)
        endObservers(error)
    }

    /// Adds an observer of what the consumer reads.
    func observe(_ observer: Observer) {
        state.withLock { $0.observers.append(observer) }
    }

    /// The next chunk, `nil` at the end; throws the stream's error, or ``CourierError/Cause/cancelled``
    /// when the reading task is cancelled (which also stops the transfer).
    func next() async throws(CourierError) -> Data? {
        enum Ready {
            case chunk(Data, writer: UnsafeContinuation<Bool, Never>?, observers: [Observer])
            case end(CourierError?)
        }
        func take(_ state: inout State) -> Ready? {
            if let chunk = state.pop() {
                let writer = state.buffered <= limit / 2 ? state.writer.take() : nil
                return .chunk(chunk, writer: writer, observers: state.observers)
            }
            switch state.end {
            case .finished?: return .end(nil)
            case .failed(let error)?: return .end(error)
            case nil: return nil
            }
        }
        func deliver(_ ready: Ready) throws(CourierError) -> Data? {
            switch ready {
            case .chunk(let chunk, let writer, let observers):
                writer?.resume(returning: true)
                for observer in observers { observer.chunk(chunk) }
                return chunk
            case .end(let error):
                endObservers(error)
                if let error { throw error }
                return nil
            }
        }
        if let ready = state.withLock(take) { return try deliver(ready) }
        do {
            let chunk = try await withTaskCancellationHandler {
                try await withUnsafeThrowingContinuation { (reader: UnsafeContinuation<Data?, any Error>) in
                    let ready = state.withLock { state -> Ready? in
                        if let ready = take(&state) { return ready }
                        state.reader = reader
                        return nil
                    }
                    guard let ready else { return }
                    switch ready {
                    case .chunk(let chunk, let writer, _):
                        writer?.resume(returning: true)
                        reader.resume(returning: chunk)
                    case .end(let error?): reader.resume(throwing: error)
                    case .end(nil): reader.resume(returning: nil)
                    }
                }
            } onCancel: {
                self.terminate(CourierError(.cancelled))
            }
            if let chunk {
                for observer in state.withLock({ $0.observers }) { observer.chunk(chunk) }
            } else {
                endObservers(nil)
            }
            return chunk
        } catch {
            let failure = CourierError.wrapping(error, request: nil)
            endObservers(failure)
            throw failure
        }
    }

    private func endObservers(_ error: CourierError?) {
        let observers = state.withLock { state -> [Observer] in
            guard !state.observersEnded else { return [] }
            state.observersEnded = true
            return state.observers
        }
        for observer in observers { observer.end(error) }
    }
}

/// Bytes that overflowed a stream's memory buffer, in order, in a temporary file that is unlinked
/// as soon as it is open (nothing is left behind, even after a crash). Used under the channel's
/// lock only.
final class SpillFile {
    private let handle: FileHandle?
    private var written: UInt64 = 0
    private var read: UInt64 = 0

    init() {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-stream-\(UUID().uuidString)")
        if FileManager.default.createFile(atPath: url.path, contents: nil, attributes: [.posixPermissions: 0o600]) {
            handle = try? FileHandle(forUpdating: url)
            try? FileManager.default.removeItem(at: url)
        } else {
            handle = nil
        }
    }

    deinit { try? handle?.close() }

    /// Bytes written and not yet read back.
    var pending: Int64 { Int64(written - read) }

    /// Appends `data`; `false` when the file cannot be written.
    func append(_ data: Data) -> Bool {
        guard let handle else { return false }
        do {
            try handle.seek(toOffset: written)
            try handle.write(contentsOf: data)
            written += UInt64(data.count)
            return true
        } catch {
            return false
        }
    }

    /// Reads back up to `count` bytes; once everything is read the file is emptied for reuse.
    func read(upTo count: Int) -> Data? {
        guard let handle, pending > 0 else { return nil }
        do {
            try handle.seek(toOffset: read)
            guard let data = try handle.read(upToCount: min(count, Int(pending))), !data.isEmpty else { return nil }
            read += UInt64(data.count)
            if read == written {
                try handle.truncate(atOffset: 0)
                read = 0
                written = 0
            }
            return data
        } catch {
            return nil
        }
    }
}

extension Optional {
    /// The value, leaving `nil` behind.
    fileprivate mutating func take() -> Wrapped? {
        defer { self = nil }
        return self
    }
}
