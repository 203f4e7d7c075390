import Dispatch
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

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
package final class StreamChannel: Sendable {
    enum End {
        case finished
        case failed(CourierError)
    }

    struct State {
        /// The spill ceiling this stream counts against (the process's, unless a test's own).
        let budget: SpillBudget
        var chunks: [Data] = []
        var head = 0
        var buffered = 0
        /// Set once; delivered to the consumer after the buffered chunks.
        var end: End?
        /// The consumer is gone or the stream was stopped: no more chunks are accepted.
        var terminated = false
        var reader: UnsafeContinuation<Data?, any Error>?
        /// How many bytes the waiting reader would rather have before it is woken (see
        /// ``StreamChannel/next(isolation:atLeast:)``), and since when it waits (uptime, in
        /// nanoseconds): chunks are held for it until there are that many, or until
        /// ``StreamChannel/holdLimit`` has passed.
        var readerMinimum = 0
        var readerSince: UInt64 = 0
        /// A timer is on its way to wake a reader for whom chunks are held.
        var flushArmed = false
        /// The producer, waiting for room: `true` once the reader has taken half the buffer,
        /// `false` once the stream stopped.
        var writer: WaitingProducer?
        var onTermination: [@Sendable (CourierError) -> Void] = []
        /// What the consumer stopped the stream with, once it did.
        var stopError: CourierError?
        /// The consumer has seen the end (`nil` or an error): a later stop changes nothing.
        var endSeen = false
        /// Bytes that did not fit in memory, in order, on disk: `[spillRead, spillCommitted)` is
        /// written and unread, `[spillCommitted, spillEnd)` is being written.
        var spill: SpillFile?
        var spillRead: UInt64 = 0
        var spillCommitted: UInt64 = 0
        var spillEnd: UInt64 = 0
        /// The newest spilled chunks, gathered in memory (at most ``StreamChannel/spillBatch``
        /// bytes) and written to disk in one write once there are enough: one system call per
        /// mebibyte rather than per network chunk.
        var tail: [Data] = []
        var tailBytes = 0
        /// Every body byte the producer handed over.
        var received = 0
        /// What the exchange holds this body to, once it has seen the head.
        var rules: BodyRules?
        /// The reader that takes chunks where the producer hands them over, once one is attached
        /// (see ``StreamChannel/attach(_:)``), and whose turn it is to call it.
        var sink: (any ChunkSink)?
        var sinkTurn = SinkTurn.idle

        /// Whether newer bytes are on their way to disk (gathered, written or being written):
        /// until they are read, new chunks go that way too, to keep the order.
        var spilling: Bool { spillEnd > spillRead || tailBytes > 0 }

        /// Spilled bytes not yet read: what this stream holds of the process-wide budget.
        var spilled: Int64 { Int64(spillEnd - spillRead) + Int64(tailBytes) }

        /// Whether nothing is left for the reader, in memory or on disk.
        var drained: Bool { head == chunks.count && !spilling }

        /// What the reader takes next: a chunk from memory (the older bytes), or a range of the
        /// spill file, read outside the lock.
        mutating func pop() -> Taken? {
            if head < chunks.count {
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
                return .memory(chunk)
            }
            if let spill, spillCommitted > spillRead {
                let offset = spillRead
                let count = Int(min(spillCommitted - spillRead, 1 << 20))
                spillRead += UInt64(count)
                if spillRead == spillEnd {
                    // Drained with nothing being written: the file is reused from its start.
                    spillRead = 0
                    spillCommitted = 0
                    spillEnd = 0
                }
                budget.release(Int64(count))
                return .disk(spill, offset: offset, count: count)
            }
            // Everything on disk is read: the gathered chunks are next.
            guard spillEnd == spillRead, !tail.isEmpty else { return nil }
            let chunk = tail.removeFirst()
            tailBytes -= chunk.count
            budget.release(Int64(chunk.count))
            return .memory(chunk)
        }

        /// Gives up every spilled byte (the stream was stopped): returns them to the budget.
        mutating func dropSpill() {
            budget.release(spilled)
            spill = nil
            spillRead = 0
            spillCommitted = 0
            spillEnd = 0
            tail = []
            tailBytes = 0
        }
    }

    /// What the reader takes: bytes from memory, or a range of the spill file.
    enum Taken {
        case memory(Data)
        case disk(SpillFile, offset: UInt64, count: Int)

        /// The bytes; the spill file is read here, outside the lock. `nil` if that read fails.
        func bytes() -> Data? {
            switch self {
            case .memory(let data): data
            case .disk(let file, let offset, let count): file.read(count, at: offset)
            }
        }
    }

    /// The most bytes buffered in memory before the producer must wait (or spill, or the stream
    /// ends).
    let limit: Int
    /// The most bytes spilled to disk when the consumer falls behind a producer that cannot wait.
    let spillLimit: Int64
    let state: Locked<State>

    /// How long chunks are held for a reader that asked for a batch, at most, in nanoseconds:
    /// 10 ms by default, so that progress stays live on a slow or bursty link.
    let holdLimit: UInt64

    /// How many spilled bytes are gathered before they are written to disk in one write.
    static let spillBatch = 1 << 20

    package init(limit: Int, spillLimit: Int64 = 0, budget: SpillBudget = .shared, holdLimit: Duration = .milliseconds(10)) {
        self.limit = max(1, limit)
        self.spillLimit = max(0, spillLimit)
        self.state = Locked(State(budget: budget))
        let (seconds, attoseconds) = holdLimit.components
        self.holdLimit = UInt64(clamping: max(0, seconds)) &* 1_000_000_000 &+ UInt64(clamping: max(0, attoseconds / 1_000_000_000))
    }

    /// Whether the reader is waiting for a chunk (for tests).
    var readerIsWaiting: Bool { state.withLock { $0.reader != nil } }

    deinit {
        // A stream dropped with spilled bytes unread gives them back.
        state.withLock { $0.dropSpill() }
    }

    static let spillFailure = CourierError(
        .transport(TransportFailure(.other, message: "the stream's spill file could not be written or read")))

    // MARK: Producer

    /// Buffers `chunk` without waiting. Returns `false` when the stream no longer accepts chunks
    /// (the consumer is gone, or this chunk overflowed both limits and ended the stream): the
    /// producer should stop. Called by one producer at a time.
    @discardableResult
    package func yield(_ chunk: Data) -> Bool {
        guard !chunk.isEmpty else { return !isClosed }
        enum Step {
            case rejected
            case handOver(UnsafeContinuation<Data?, any Error>)
            /// The reader's wait is over: it takes this (older) chunk and polls for the rest.
            case wake(UnsafeContinuation<Data?, any Error>, Data)
            /// Held for a reader who wants more; a timer makes sure it does not wait long.
            case held(armTimer: Bool)
            case buffered
            case spill(SpillFile, offset: UInt64, batch: Data)
            case overflow
            case tooLarge(BodyRules)
            /// The sink is attached and idle: the producer hands the chunk over itself.
            case deliver(any ChunkSink)
        }
        var active: IdleTimer?
        let step = state.withLock { state -> Step in
            guard !state.terminated, state.end == nil else { return .rejected }
            state.received += chunk.count
            if let rules = state.rules {
                if let maximum = rules.maximumSize, state.received > maximum { return .tooLarge(rules) }
                active = rules.timer
            }
            if let sink = state.sink, case .idle = state.sinkTurn, state.drained {
                state.sinkTurn = .delivering(resumeAsked: false)
                return .deliver(sink)
            }
            if !state.spilling {
                if let reader = state.reader {
                    if state.readerMinimum <= chunk.count, state.buffered == 0 {
                        state.reader = nil
                        return .handOver(reader)
                    }
                    // A reader that asked for a batch: hold the chunk until there is one, or the
                    // reader has waited long enough.
                    state.chunks.append(chunk)
                    state.buffered += chunk.count
                    if state.buffered >= state.readerMinimum || DispatchTime.now().uptimeNanoseconds &- state.readerSince >= holdLimit {
                        guard case .memory(let first)? = state.pop() else { return .buffered }
                        state.reader = nil
                        return .wake(reader, first)
                    }
                    defer { state.flushArmed = true }
                    return .held(armTimer: !state.flushArmed)
                }
                if state.buffered == 0 || state.buffered + chunk.count <= limit {
                    state.chunks.append(chunk)
                    state.buffered += chunk.count
                    return .buffered
                }
            }
            // Past the memory buffer: to disk, within this stream's limit and the process's.
            guard spillLimit > 0, state.spilled + Int64(chunk.count) <= spillLimit, state.budget.reserve(Int64(chunk.count)) else {
                return .overflow
            }
            state.tail.append(chunk)
            state.tailBytes += chunk.count
            guard state.tailBytes >= Self.spillBatch else { return .buffered }
            if state.spill == nil { state.spill = SpillFile() }
            guard let spill = state.spill, spill.isOpen else { return .overflow }
            var batch = Data(capacity: state.tailBytes)
            for part in state.tail { batch.append(part) }
            let offset = state.spillEnd
            state.spillEnd += UInt64(batch.count)
            state.tail = []
            state.tailBytes = 0
            return .spill(spill, offset: offset, batch: batch)
        }
        active?.touch()
        switch step {
        case .rejected: return false
        case .tooLarge(let rules):
            terminate(rules.tooLarge)
            return false
        case .handOver(let reader):
            reader.resume(returning: chunk)
            return true
        case .wake(let reader, let first):
            reader.resume(returning: first)
            return true
        case .held(let armTimer):
            if armTimer { armFlush() }
            return true
        case .buffered: return true
        case .deliver(let sink):
            feedSink(sink, first: chunk)
            return true
        case .overflow:
            terminate(CourierError(.slowConsumer(bufferLimit: limit)))
            return false
        case .spill(let file, let offset, let batch):
            // The write happens outside the lock: the reader keeps reading meanwhile.
            guard file.write(batch, at: offset) else {
                terminate(Self.spillFailure)
                return false
            }
            let waiting = state.withLock { state -> (UnsafeContinuation<Data?, any Error>, Taken)? in
                guard !state.terminated, state.spill === file else { return nil }
                state.spillCommitted = offset + UInt64(batch.count)
                // A reader that found nothing to read while this write was under way.
                guard state.reader != nil, let taken = state.pop(), let reader = state.reader.take() else { return nil }
                return (reader, taken)
            }
            if let (reader, taken) = waiting {
                guard let bytes = taken.bytes() else {
                    reader.resume(throwing: Self.spillFailure)
                    terminate(Self.spillFailure)
                    return false
                }
                reader.resume(returning: bytes)
            }
            return true
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
                    state.writer = .task(writer)
                    return nil
                }
                if let resumeNow { writer.resume(returning: resumeNow) }
            }
            if !open { return false }
        }
    }

    /// Whether a chunk of `count` bytes would be taken now, as ``offer(_:whenRoom:)`` takes one
    /// (the stream open, and the reader waiting or the buffer with room for it). With one
    /// producer, room only grows until it yields.
    package func hasRoom(for count: Int) -> Bool {
        state.withLock { state in
            guard !state.terminated, state.end == nil else { return false }
            return state.reader != nil || state.buffered == 0 || state.buffered + count <= limit
        }
    }

    /// Offers `chunk` without waiting, for a producer that can pause instead (an event loop that
    /// stops reading its socket): taken when there is room (or a reader waits for it), as
    /// ``send(_:)`` would; otherwise left with the producer, and `whenRoom` kept, to run once with
    /// `true` when the reader has taken half the buffer (offer the chunk again then) or with
    /// `false` when the stream stops. One producer at a time.
    package func offer(_ chunk: Data, whenRoom: @escaping @Sendable (Bool) -> Void) -> ByteStream.Offer {
        guard !chunk.isEmpty else { return isClosed ? .closed : .taken }
        enum Step { case closed, full, yield, deliver(any ChunkSink) }
        let step = state.withLock { state -> Step in
            guard !state.terminated, state.end == nil else { return .closed }
            // An idle sink with nothing before the chunk, and no rules to count it against: handed
            // over from here, under this one lock (``yield(_:)`` would take it again to decide so).
            if state.rules == nil, let sink = state.sink, case .idle = state.sinkTurn, state.drained {
                state.received += chunk.count
                state.sinkTurn = .delivering(resumeAsked: false)
                return .deliver(sink)
            }
            guard state.reader == nil, state.buffered > 0, state.buffered + chunk.count > limit else { return .yield }
            state.writer = .callback(whenRoom)
            return .full
        }
        switch step {
        case .closed: return .closed
        case .full: return .full
        case .yield: return yield(chunk) ? .taken : .closed
        case .deliver(let sink):
            feedSink(sink, first: chunk)
            return .taken
        }
    }

    /// Ends the stream after the buffered chunks: normally, or with `error`.
    package func finish(_ error: CourierError? = nil) {
        var error = error
        var timer: IdleTimer?
        var sinkEnded: (any ChunkSink)?
        let (reader, writer, held) = state.withLock {
            state -> (UnsafeContinuation<Data?, any Error>?, WaitingProducer?, (UnsafeContinuation<Data?, any Error>, Data)?) in
            guard state.end == nil, !state.terminated else { return (nil, nil, nil) }
            timer = state.rules?.timer
            if error == nil { error = state.rules?.framingError(received: state.received) }
            state.end = error.map(End.failed) ?? .finished
            if state.sink != nil {
                // The sink reads the end after what it holds; when it is idle, from here.
                guard case .idle = state.sinkTurn, state.drained, let sink = state.sink.take() else { return (nil, nil, nil) }
                state.sinkTurn = .ended
                state.endSeen = true
                sinkEnded = sink
                return (nil, nil, nil)
            }
            guard state.drained else {
                // A reader waiting for a batch takes what is held; it reads the end after it.
                if state.reader != nil, case .memory(let first)? = state.pop() {
                    return (nil, state.writer.take(), state.reader.take().map { ($0, first) })
                }
                return (nil, state.writer.take(), nil)
            }
            return (state.reader.take(), state.writer.take(), nil)
        }
        timer?.stop()
        sinkEnded?.streamEnded(error)
        writer?.resume(false)
        if let (waiting, first) = held { waiting.resume(returning: first) }
        guard let reader else { return }
        if let error { reader.resume(throwing: error) } else { reader.resume(returning: nil) }
    }

    /// The whole body, taken at once, when the producer finished it normally, nobody has read
    /// from it and every byte is in memory: a body gathered whole before its head goes out. The
    /// stream is then spent (a later stop changes nothing, and the producer's stop actions never
    /// run). `nil` otherwise, and the stream is left as it was.
    package func takeFinished() -> Data? {
        state.withLock { state -> Data? in
            // Every byte received is still buffered: none was read, none went to disk.
            guard case .finished? = state.end, !state.terminated, !state.endSeen, state.reader == nil, !state.spilling,
                state.buffered == state.received
            else { return nil }
            let chunks = state.chunks[state.head...]
            var data: Data
            if chunks.count == 1, let only = chunks.first {
                data = only
            } else {
                data = Data(capacity: state.buffered)
                for chunk in chunks { data.append(chunk) }
            }
            state.chunks = []
            state.head = 0
            state.buffered = 0
            state.endSeen = true
            state.terminated = true
            state.onTermination = []
            return data
        }
    }

    /// Wakes, after ``holdLimit``, a reader for whom chunks are still held.
    private func armFlush() {
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(holdLimit))) { [weak self] in
            self?.flushHeld()
        }
    }

    private func flushHeld() {
        let woken = state.withLock { state -> (UnsafeContinuation<Data?, any Error>, Data)? in
            state.flushArmed = false
            guard state.reader != nil, case .memory(let first)? = state.pop() else { return nil }
            return state.reader.take().map { ($0, first) }
        }
        if let (reader, first) = woken { reader.resume(returning: first) }
    }

    /// Registers an action run once when the stream is stopped from the consumer's side
    /// (cancelled, overflowed, timed out, dropped unread): the producer's cue to stop the transfer.
    /// Runs at once if the stream is already stopped.
    package func onTermination(_ action: @escaping @Sendable () -> Void) {
        onStop { _ in action() }
    }

    /// Registers an action run once, with the error, when the stream is stopped from the
    /// consumer's side; at once (with the error it was stopped with) if it already was.
    func onStop(_ action: @escaping @Sendable (CourierError) -> Void) {
        let stopped = state.withLock { state -> CourierError? in
            guard !state.terminated else { return state.stopError ?? CourierError(.cancelled) }
            state.onTermination.append(action)
            return nil
        }
        if let stopped { action(stopped) }
    }

    /// The error the consumer's side stopped the stream with, if it did.
    package var stopError: CourierError? { state.withLock { $0.stopError } }

    /// Whether the stream has ended or been stopped, so a producer can stop early.
    package var isClosed: Bool { state.withLock { $0.terminated || $0.end != nil } }
}

extension Optional {
    /// The value, leaving `nil` behind.
    mutating func take() -> Wrapped? {
        defer { self = nil }
        return self
    }
}

/// A producer waiting for room in a ``StreamChannel``: a task suspended in ``StreamChannel/send(_:)``,
/// or the callback of ``StreamChannel/offer(_:whenRoom:)``.
enum WaitingProducer: Sendable {
    case task(UnsafeContinuation<Bool, Never>)
    case callback(@Sendable (Bool) -> Void)

    /// Wakes the producer: `true` when there is room, `false` when the stream stopped.
    func resume(_ open: Bool) {
        switch self {
        case .task(let continuation): continuation.resume(returning: open)
        case .callback(let callback): callback(open)
        }
    }
}
