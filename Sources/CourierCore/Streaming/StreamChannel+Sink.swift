#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A reader that takes a stream's chunks where the producer hands them over (on a transport's
/// event loop, in the thread that delivers the bytes) rather than in a task of its own: what a
/// protocol that parses every chunk at once (a WebSocket's frames) attaches with
/// ``ByteStream/deliver(to:)``, so that a chunk costs no task to be woken.
///
/// Chunks come one call at a time, in order, never two at once: from the producer, or from the
/// thread that calls ``ByteStream/resumeDelivery()`` after the sink paused. A sink that cannot
/// take more (its own buffer is full, or it has work to do in a task) returns `false` from
/// ``take(_:)``: the stream then holds what comes next, with the backpressure a waiting reader
/// would give the producer (an event loop stops reading its socket), until the sink asks for more.
package protocol ChunkSink: AnyObject, Sendable {
    /// Takes `chunk` (an empty one: go on with what you hold, the stream resumed delivery).
    /// - Returns: `false` to pause: nothing more is handed over until
    ///   ``ByteStream/resumeDelivery()``.
    func take(_ chunk: Data) -> Bool

    /// The stream ended: normally (`nil`, after every chunk was taken) or with `error` (a
    /// transport's failure, or the stream was stopped). Called once; may come from any thread,
    /// while a chunk is being taken, when the stream is stopped from the reader's side.
    func streamEnded(_ error: CourierError?)
}

/// Whose turn it is to call a stream's ``ChunkSink``.
enum SinkTurn {
    /// Nobody's: the next chunk the producer brings goes straight to the sink.
    case idle
    /// A thread is handing chunks over; `resumeAsked` when the sink asked to resume meanwhile
    /// (it paused and its cause cleared before the pause was recorded).
    case delivering(resumeAsked: Bool)
    /// The sink returned `false`: chunks wait in the buffer until it resumes delivery.
    case paused
    /// The sink has had its end.
    case ended
}

extension StreamChannel {
    /// Attaches `sink`: every chunk buffered so far, then every chunk the producer brings, goes
    /// to it, then the end. `false` (nothing attached) when a reader has begun reading, another
    /// sink is attached, or the stream was stopped.
    func attach(_ sink: any ChunkSink) -> Bool {
        let attached = state.withLock { state in
            guard state.sink == nil, state.reader == nil, !state.endSeen, !state.terminated else { return false }
            state.sink = sink
            state.sinkTurn = .delivering(resumeAsked: false)
            return true
        }
        if attached { feedSink(sink, first: Data()) }
        return attached
    }

    /// Hands the sink's paused delivery back: what it holds, then what is buffered, go on from
    /// this thread (or from the one delivering now, if the pause was not yet recorded).
    func resumeSink() {
        let resumed = state.withLock { state -> (any ChunkSink)? in
            switch state.sinkTurn {
            case .paused:
                state.sinkTurn = .delivering(resumeAsked: false)
                return state.sink
            case .delivering:
                state.sinkTurn = .delivering(resumeAsked: true)
                return nil
            case .idle, .ended:
                return nil
            }
        }
        if let resumed { feedSink(resumed, first: Data()) }
    }

    /// Takes the sink's turn from here: `first`, then the buffered chunks, then the end, for as
    /// long as the sink takes them. Called by whoever set ``SinkTurn/delivering(resumeAsked:)``.
    func feedSink(_ sink: any ChunkSink, first: Data) {
        enum Next {
            case chunk(Taken, (any ChunkSink)?, WaitingProducer?)
            case end(any ChunkSink, CourierError?, WaitingProducer?)
            case idle(WaitingProducer?)
            case stopped
        }
        var chunk = first
        var sink: (any ChunkSink)? = sink
        while let current = sink {
            if !current.take(chunk) {
                let again = state.withLock { state -> Bool in
                    guard case .delivering(true) = state.sinkTurn else {
                        if case .delivering = state.sinkTurn { state.sinkTurn = .paused }
                        return false
                    }
                    state.sinkTurn = .delivering(resumeAsked: false)
                    return true
                }
                guard again else { return }
                chunk = Data()
                continue
            }
            let next = state.withLock { state -> Next in
                guard !state.terminated, state.sink != nil else { return .stopped }
                if let taken = state.pop() {
                    return .chunk(taken, state.sink, state.buffered <= limit / 2 ? state.writer.take() : nil)
                }
                if let end = state.end, let sink = state.sink.take() {
                    state.sinkTurn = .ended
                    state.endSeen = true
                    if case .failed(let error) = end { return .end(sink, error, state.writer.take()) }
                    return .end(sink, nil, state.writer.take())
                }
                state.sinkTurn = .idle
                return .idle(state.writer.take())
            }
            switch next {
            case .chunk(let taken, let next, let writer):
                writer?.resume(true)
                guard let bytes = taken.bytes() else {
                    terminate(Self.spillFailure)
                    return
                }
                chunk = bytes
                sink = next
            case .end(let sink, let error, let writer):
                writer?.resume(false)
                sink.streamEnded(error)
                return
            case .idle(let writer):
                writer?.resume(true)
                return
            case .stopped:
                return
            }
        }
    }
}

extension ByteStream {
    /// Hands this stream's chunks to `sink` where the producer delivers them (see
    /// ``ChunkSink``), from now on: what is buffered first, here. `false` when it cannot: a body
    /// in hand, an observed stream (its observers see what a reader takes), a stream already read
    /// from or stopped; read it with a task then.
    ///
    /// Keep the stream while the sink reads it: dropping its last copy stops it, as for any reader.
    /// - Parameter sink: The reader.
    /// - Returns: Whether the sink was attached.
    package func deliver(to sink: any ChunkSink) -> Bool {
        guard observations.isEmpty, case .live(let channel, _) = source else { return false }
        return channel.attach(sink)
    }

    /// Resumes delivery to the sink that paused (its ``ChunkSink/take(_:)`` returned `false`):
    /// it is called again from this thread, first with an empty chunk.
    package func resumeDelivery() {
        if case .live(let channel, _) = source { channel.resumeSink() }
    }
}
