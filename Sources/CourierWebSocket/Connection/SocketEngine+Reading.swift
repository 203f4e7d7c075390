import CourierCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What the read side holds between chunks: the frames not yet whole, the message not yet
/// finished.
struct SocketReading {
    var parser: FrameParser
    var assembler: MessageAssembler
}

extension SocketEngine: ChunkSink {
    /// Starts reading `inbound` (the bytes after the `101`): where the transport delivers them
    /// when the stream allows it (``ByteStream/deliver(to:)``: a message then costs no task of
    /// Courier's to be woken, only its reader's), otherwise in a task that reads the stream (on
    /// the transport's executor, when it named one). Both hand each chunk to ``take(_:)``.
    func startReading(_ inbound: ByteStream) -> Task<Void, Never>? {
        reader.withLock { $0 = .direct(inbound) }
        if inbound.deliver(to: self) { return nil }
        let pulled = Resumption()
        reader.withLock { $0 = .pulled(pulled) }
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *), let executor = readingExecutor as? any TaskExecutor {
            return Task(executorPreference: executor) { await self.pull(inbound, pulled) }
        }
        return Task { await self.pull(inbound, pulled) }
    }

    /// The read loop of a stream that cannot deliver to a sink: each chunk to ``take(_:)``,
    /// waiting for ``resumeReading()`` while it pauses.
    private func pull(_ inbound: ByteStream, _ resumption: Resumption) async {
        var iterator = inbound.makeAsyncIterator()
        while !isEnded {
            let chunk: Data?
            do {
                chunk = try await iterator.next()
            } catch {
                if !isEnded { end(.failure(Task.isCancelled ? cancelled() : lost("the connection failed", underlying: error))) }
                return
            }
            guard let chunk else {
                end(.failure(lost("the connection ended without a close frame")))
                return
            }
            var more = take(chunk)
            while !more {
                await resumption.wait()
                if isEnded || Task.isCancelled { return }
                more = take(Data())
            }
        }
    }

    /// Frames out of the connection's bytes, messages into ``buffer``; `false` (a pause) when the
    /// buffer is full (the reader makes room, and reading resumes), or when a frame needs a task:
    /// a ping to answer, the peer's close, a frame that breaks the rules (closed with its code), a
    /// large compressed message (inflated off the transport's loop). Reading resumes when that
    /// task is done. Called one chunk at a time (``ChunkSink``).
    func take(_ chunk: Data) -> Bool {
        // With a handler, each message checks the state as it is handed out.
        if handler != nil { return handOut(chunk) }
        let (ended, closeSent) = state.withLock { ($0.outcome != nil, $0.closeSent) }
        if ended { return false }
        let deferred: Deferred? = reading.withLock { reading in
            if !chunk.isEmpty { reading.parser.append(chunk) }
            do throws(WebSocketFailure) {
                while let frame = try reading.parser.next() {
                    if readingExecutor != nil, reading.assembler.inflates(frame, atLeast: Self.offLoopInflation) { return .inflate(frame) }
                    guard let event = try reading.assembler.take(frame) else { continue }
                    switch event {
                    case .message(let message):
                        // After this end's close frame nothing more is handed out (its buffer
                        // ended before the frame went); a reader that stopped (the buffer ended
                        // but the socket did not) leaves the loop reading for the close.
                        if closeSent { continue }
                        switch buffer.offer(message) {
                        case .taken: continue
                        case .full: return .some(.paused)
                        case .ended: if isEnded { return .some(.paused) }
                        }
                    case .pong(let payload):
                        received(pong: payload)
                    case .ping, .close:
                        return .event(event)
                    }
                }
                return nil
            } catch {
                return .failure(error)
            }
        }
        guard let deferred else { return true }
        switch deferred {
        case .paused: break
        case .inflate, .event, .failure: runDeferred(deferred)
        }
        return false
    }

    /// ``take(_:)`` for a socket with a message handler: each message is handed to it as it is
    /// whole, outside the reading lock (the handler may send; it is called one message at a time,
    /// in order, and a chunk that arrives meanwhile waits for the loop here, as the stream hands
    /// chunks over one at a time). Nothing is buffered, so reading pauses only for what needs a
    /// task (as above).
    private func handOut(_ chunk: Data) -> Bool {
        enum Step {
            /// A message, and whether bytes are left after it (another frame may be whole).
            case message(WebSocketMessage, more: Bool)
            case done
            case deferred(Deferred)
        }
        var appended = chunk.isEmpty
        while true {
            let step: Step = reading.withLock { reading in
                if !appended {
                    reading.parser.append(chunk)
                    appended = true
                }
                do throws(WebSocketFailure) {
                    while let frame = try reading.parser.next() {
                        if readingExecutor != nil, reading.assembler.inflates(frame, atLeast: Self.offLoopInflation) { return .deferred(.inflate(frame)) }
                        guard let event = try reading.assembler.take(frame) else { continue }
                        switch event {
                        case .message(let message): return .message(message, more: reading.parser.bufferedCount > 0)
                        case .pong(let payload): received(pong: payload)
                        case .ping, .close: return .deferred(.event(event))
                        }
                    }
                    return .done
                } catch {
                    return .deferred(.failure(error))
                }
            }
            switch step {
            case .message(let message, let more):
                if !handOut(message) { return false }
                if !more { return true }
            case .done:
                return true
            case .deferred(let deferred):
                runDeferred(deferred)
                return false
            }
        }
    }

    /// Gives `message` to the handler, unless this end has sent its close frame (nothing is
    /// handed out after it) or the socket has ended; `false` once it has (reading stops).
    private func handOut(_ message: WebSocketMessage) -> Bool {
        let (ended, closeSent) = state.withLock { ($0.outcome != nil, $0.closeSent) }
        if ended { return false }
        if !closeSent, let handler, let socket = face { handler(socket, message) }
        return true
    }

    /// The stream ended (``ChunkSink``): a clean end without a close frame is a lost connection.
    func streamEnded(_ error: CourierError?) {
        guard !isEnded else { return }
        if let error {
            end(.failure(lost("the connection failed", underlying: error)))
        } else {
            end(.failure(lost("the connection ended without a close frame")))
        }
    }

    /// What a paused read waits for.
    enum Deferred {
        /// The reader's room in the buffer.
        case paused
        /// A compressed message too large to inflate on the transport's loop.
        case inflate(WebSocketFrame)
        /// A ping to answer, or the peer's close.
        case event(MessageAssembler.Event)
        /// A frame that broke the rules.
        case failure(WebSocketFailure)
    }

    /// Does in a task what reading paused for, then resumes reading (unless the socket is over).
    func runDeferred(_ deferred: Deferred) {
        let work: @Sendable () async -> Void = {
            switch deferred {
            case .paused: return
            case .failure(let failure):
                await self.fail(failure)
                return
            case .inflate(let frame):
                let event: Result<MessageAssembler.Event?, WebSocketFailure>
                if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
                    // Off the transport's loop, where reading runs: it would hold up the loop's
                    // other connections.
                    event = await withTaskExecutorPreference(globalConcurrentExecutor) {
                        self.reading.withLock { reading in Result { () throws(WebSocketFailure) in try reading.assembler.take(frame) } }
                    }
                } else {
                    event = self.reading.withLock { reading in Result { () throws(WebSocketFailure) in try reading.assembler.take(frame) } }
                }
                switch event {
                case .failure(let failure):
                    await self.fail(failure)
                    return
                case .success(let event?):
                    guard await self.handle(event) else { return }
                case .success(nil): break
                }
            case .event(let event):
                guard await self.handle(event) else { return }
            }
            self.resumeReading()
        }
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *), let executor = readingExecutor as? any TaskExecutor {
            Task(executorPreference: executor, operation: work)
        } else {
            Task(operation: work)
        }
    }

    /// Stops reading once the socket has ended: a stream that delivers is let go (which ends its
    /// hold on this engine), a paused read loop wakes to see the end.
    func stopReading() {
        switch reader.withLock({ $0 }) {
        case .direct(let inbound): inbound.cancel()
        case .pulled(let resumption): resumption.signal()
        case .none: break
        }
    }

    /// Resumes a paused read, from this thread.
    func resumeReading() {
        switch reader.withLock({ $0 }) {
        case .direct(let inbound): inbound.resumeDelivery()
        case .pulled(let resumption): resumption.signal()
        case .none: break
        }
    }

    /// The compressed size from which a message is inflated on the global concurrent executor
    /// rather than on the loop that reads the connection.
    static let offLoopInflation = 64 << 10

    /// Acts on one event in a task; `false` when the socket is over and reading stops.
    private func handle(_ event: MessageAssembler.Event) async -> Bool {
        switch event {
        case .message(let message):
            if handler != nil { return handOut(message) }
            if state.withLock({ $0.closeSent }) { return true }
            if await !buffer.push(message) { return !isEnded }
            return true
        case .ping(let payload):
            try? await write(WebSocketFrame(.pong, payload: payload))
            return !isEnded
        case .pong(let payload):
            received(pong: payload)
            return true
        case .close(let code, let reason):
            let (reply, first) = state.withLock { state in
                if state.firstClose == nil { state.firstClose = WebSocketClose(initiator: .server, code: code, reason: reason) }
                return (!state.closeSent, state.firstClose ?? WebSocketClose(initiator: .server, code: code, reason: reason))
            }
            if reply {
                // The answer echoes the peer's code (RFC 6455 §5.5.1), or carries none if it had none.
                try? await write(WebSocketFrame(.close, payload: Self.closePayload(code, ""))) { state in
                    defer { state.closeSent = true }
                    return !state.closeSent
                }
            }
            end(.success(first))
            return false
        }
    }

    /// The peer broke the rules: close with the failure's code (waiting at most the close
    /// timeout for the frame to go out), then end with the failure.
    private func fail(_ failure: WebSocketFailure) async {
        let error = CourierError(.webSocket(failure), request: request)
        if let code = failure.closeCode, code.mayBeSent {
            let timer = Task { [clock, options] in
                do {
                    try await sleep(on: clock, for: options.closeTimeout, as: .webSocketClose)
                } catch {
                    return
                }
                self.end(.failure(error))
            }
            adopt(timer)
            try? await write(WebSocketFrame(.close, payload: Self.closePayload(code, ""))) { state in
                defer { state.closeSent = true }
                return !state.closeSent
            }
            timer.cancel()
        }
        end(.failure(error))
    }
}

/// How the socket's bytes reach ``SocketEngine/take(_:)``.
enum SocketReader: Sendable {
    /// The stream delivers them (``ByteStream/deliver(to:)``); kept here, since dropping it
    /// would stop it.
    case direct(ByteStream)
    /// A task reads the stream and waits on this while reading pauses.
    case pulled(Resumption)
}

/// One waiter (a read loop) and the signal that wakes it; a signal given before the wait is kept.
final class Resumption: Sendable {
    private let state = Locked<(signalled: Bool, waiter: UnsafeContinuation<Void, Never>?)>((false, nil))

    /// Returns at the next signal (at once, if one came since the last wait).
    func wait() async {
        await withUnsafeContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if state.signalled {
                    state.signalled = false
                    return true
                }
                state.waiter = continuation
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Wakes the waiter, or keeps the signal for the next wait.
    func signal() {
        let waiter = state.withLock { state -> UnsafeContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.signalled = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }
}
