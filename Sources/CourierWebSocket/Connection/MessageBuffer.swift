import CourierCore

/// The messages read from the socket and not yet taken by its reader: at most `capacity`, then
/// the socket's read loop waits or pauses (and so stops reading the connection). One reader at a
/// time.
/// Its continuations are unchecked (no allocation per wait): each is stored under the lock and
/// taken out of it by the one call that resumes it.
final class MessageBuffer: Sendable {
    private struct State {
        var queue = FirstInLine<WebSocketMessage>()
        /// How the stream ended: `nil` while open, a failure or `.success` for a clean end.
        var end: Result<Void, CourierError>?
        var reader: UnsafeContinuation<Result<WebSocketMessage?, CourierError>, Never>?
        var writer: UnsafeContinuation<Bool, Never>?
        /// What runs once there is room after an offer filled the buffer (or once the stream
        /// ended), set by ``MessageBuffer/whenRoom(_:)``.
        var roomAction: (@Sendable () -> Void)?
        /// An offer filled the buffer: ``roomAction`` runs when the reader takes a message.
        var roomWanted = false
        /// The action, when it is wanted (and no longer wanted after that).
        mutating func room() -> (@Sendable () -> Void)? {
            guard roomWanted else { return nil }
            roomWanted = false
            return roomAction
        }
        var count: Int { queue.count }
    }

    private let capacity: Int
    private let state = Locked(State())

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Whether the read loop waits for the reader to take a message: the socket is not being
    /// read, so nothing behind those messages (a pong) can arrive.
    var isHoldingWriter: Bool { state.withLock { $0.writer != nil || $0.roomWanted } }

    /// What became of a message offered without waiting.
    enum Offered {
        /// Buffered, or handed to the waiting reader.
        case taken
        /// Buffered, and the buffer is now full: `room` runs once the reader has taken one.
        case full
        /// The stream has ended: the message is dropped.
        case ended
    }

    /// Sets what runs when there is room again after ``offer(_:)`` filled the buffer, or when
    /// the stream ends: the paused read loop's cue to go on.
    func whenRoom(_ action: @escaping @Sendable () -> Void) {
        state.withLock { $0.roomAction = action }
    }

    /// Adds `message` without waiting, for a read loop that pauses instead (see ``Offered``).
    func offer(_ message: WebSocketMessage) -> Offered {
        let (offered, reader) = state.withLock { state -> (Offered, UnsafeContinuation<Result<WebSocketMessage?, CourierError>, Never>?) in
            guard state.end == nil else { return (.ended, nil) }
            if let reader = state.reader.take() { return (.taken, reader) }
            state.queue.append(message)
            guard state.count >= capacity else { return (.taken, nil) }
            state.roomWanted = true
            return (.full, nil)
        }
        reader?.resume(returning: .success(message))
        return offered
    }

    /// Adds `message`, waiting while the buffer is full; `false` once the stream ended.
    func push(_ message: WebSocketMessage) async -> Bool {
        enum Step { case done(Bool), resume(UnsafeContinuation<Result<WebSocketMessage?, CourierError>, Never>), wait }
        let step: Step = state.withLock { state in
            guard state.end == nil else { return .done(false) }
            if let reader = state.reader {
                state.reader = nil
                return .resume(reader)
            }
            state.queue.append(message)
            return state.count >= capacity ? .wait : .done(true)
        }
        switch step {
        case .done(let open): return open
        case .resume(let reader):
            reader.resume(returning: .success(message))
            return true
        case .wait:
            return await withUnsafeContinuation { continuation in
                let open: Bool? = state.withLock { state in
                    guard state.end == nil else { return false }
                    guard state.count >= capacity else { return true }
                    state.writer = continuation
                    return nil
                }
                if let open { continuation.resume(returning: open) }
            }
        }
    }

    /// Ends the stream: the reader gets what is buffered, then the end (`nil` for a clean one).
    /// The first end is kept.
    func finish(_ failure: CourierError?) {
        let (reader, writer, room) = state.withLock {
            state -> (UnsafeContinuation<Result<WebSocketMessage?, CourierError>, Never>?, UnsafeContinuation<Bool, Never>?, (@Sendable () -> Void)?) in
            if state.end == nil { state.end = failure.map { .failure($0) } ?? .success(()) }
            defer { (state.reader, state.writer) = (nil, nil) }
            return (state.reader, state.writer, state.room())
        }
        writer?.resume(returning: false)
        room?()
        guard let reader else { return }
        reader.resume(returning: failure.map { .failure($0) } ?? .success(nil))
    }

    /// The next message, `nil` after a clean end, or the failure the stream ended with, when one
    /// is already there; `nil` when the reader must wait (then ``wait(_:)``). Taken without
    /// suspending: the reader's fast path (a waiting writer is woken).
    func takeReady() -> Result<WebSocketMessage?, CourierError>? {
        let (value, writer, room) = state.withLock { state -> (Result<WebSocketMessage?, CourierError>?, UnsafeContinuation<Bool, Never>?, (@Sendable () -> Void)?) in
            let value = Self.ready(&state)
            guard value != nil else { return (value, nil, nil) }
            defer { state.writer = nil }
            return (value, state.writer, state.room())
        }
        writer?.resume(returning: true)
        room?()
        return value
    }

    /// Resumes `reader` with the next message, the end, or (when neither is there yet) when one
    /// comes. Called from inside the reader's `withUnsafeContinuation`, in the reader's own
    /// isolation: waiting costs no executor switch.
    func wait(_ reader: UnsafeContinuation<Result<WebSocketMessage?, CourierError>, Never>) {
        let (ready, writer, room) = state.withLock { state -> (Result<WebSocketMessage?, CourierError>?, UnsafeContinuation<Bool, Never>?, (@Sendable () -> Void)?) in
            guard let value = Self.ready(&state) else {
                state.reader = reader
                return (nil, nil, nil)
            }
            defer { state.writer = nil }
            return (value, state.writer, state.room())
        }
        writer?.resume(returning: true)
        room?()
        if let ready { reader.resume(returning: ready) }
    }

    /// A buffered message (waking a waiting writer is left to the caller), or the end.
    private static func ready(_ state: inout State) -> Result<WebSocketMessage?, CourierError>? {
        if let message = state.queue.popFirst() { return .success(message) }
        switch state.end {
        case .none: return nil
        case .success: return .success(nil)
        case .failure(let error): return .failure(error)
        }
    }
}
