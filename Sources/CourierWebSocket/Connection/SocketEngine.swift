import CourierCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What runs an open WebSocket: the read loop, the ordered writes, the pings, the closing
/// handshake and the one outcome. ``WebSocket`` is its public face.
///
/// **Writes** go out whole and in the order they were asked for: each takes a turn (first come,
/// first served) and the state is checked as it queues, so nothing is queued after the close
/// frame. **The end** is decided once (``end(_:)``): a clean close or a failure; it closes the
/// connection, ends ``buffer``, wakes every waiter and stops the tasks.
final class SocketEngine: Sendable {
    struct State {
        /// The first close frame, whoever sent it.
        var firstClose: WebSocketClose?
        /// Whether this end sent its close frame (nothing may follow it).
        var closeSent = false
        var outcome: Result<WebSocketClose, CourierError>?
        var outcomeWaiters: [CheckedContinuation<Result<WebSocketClose, CourierError>, Never>] = []
        /// Whether a write holds the turn, and who waits for it, in order: a sender's task, or
        /// a message queued by ``SocketEngine/enqueue(_:)``.
        var writing = false
        var turns = FirstInLine<Turn>()
        /// The bytes of the messages queued in ``turns``.
        var queuedBytes = 0
        /// The second half of the last 64 random bits drawn, for the next frame's masking key:
        /// taken with the turn, put back as the turn is given back (no lock of its own).
        var spareMask: UInt32?
        /// Pings waiting for their pong, by payload.
        var pings: [UInt64: PongSlot] = [:]
        var nextPing: UInt64 = 0
        var tasks: [Task<Void, Never>] = []
    }

    /// Who waits for the writing turn.
    enum Turn {
        /// A sender's task, resumed with the turn.
        case task(CheckedContinuation<Void, Never>)
        /// A message queued without waiting (``SocketEngine/enqueue(_:)``), its frame made in its
        /// turn or (compressed on its own) before it; `bytes` counts toward the queue's limit.
        case queued(Pending, bytes: Int)
    }

    /// A queued message: its frame made when its turn comes (with the context taken over, the
    /// deflater must see messages in the order they go), or already made.
    enum Pending {
        case message(WebSocketMessage)
        case made(Outgoing)
    }

    enum PongSlot {
        case waiting(CheckedContinuation<Bool, Never>?)
        case arrived
    }

    let connection: any UpgradedConnection
    let options: WebSocketOptions
    /// What the server accepted of the compression offered, if anything.
    let compression: NegotiatedCompression?
    let clock: any Clock<Duration>
    /// The handshake's request, for errors (redacted when an error stores it).
    let request: Request
    let buffer: MessageBuffer
    /// With the context taken over: the deflater's memory of what this end compressed, which the
    /// server's inflater keeps as its window; made at the first compressed message, used in the
    /// writing turn only.
    private let sentContext = Locked<Deflater.Context?>(nil)
    let state = Locked(State())
    /// The frames and the message being read (see `SocketEngine+Reading.swift`).
    let reading: Locked<SocketReading>
    /// How the bytes reach the read side, once reading started.
    let reader = Locked<SocketReader?>(nil)

    /// Where the connection's reads arrive (an `any TaskExecutor`, such as a transport's event
    /// loop), when the transport named one: the read loop runs there.
    let readingExecutor: (any Sendable)?

    /// Where messages go when the socket was opened with a handler
    /// (``Executor/webSocket(_:options:clock:onMessage:)``) instead of into ``buffer``.
    let handler: (@Sendable (WebSocket, WebSocketMessage) -> Void)?
    /// The socket the handler is given: its public face, held weakly (dropping the last
    /// reference to it ends the socket). Set once, before reading starts, and only read after.
    nonisolated(unsafe) weak var face: WebSocket?

    init(
        connection: any UpgradedConnection, options: WebSocketOptions, compression: NegotiatedCompression? = nil, clock: any Clock<Duration>,
        request: Request, readingExecutor: (any Sendable)? = nil, handler: (@Sendable (WebSocket, WebSocketMessage) -> Void)? = nil
    ) {
        self.readingExecutor = readingExecutor
        self.handler = handler
        self.connection = connection
        self.options = options
        self.compression = compression
        self.clock = clock
        self.request = request
        self.buffer = MessageBuffer(capacity: options.bufferedMessages)
        self.reading = Locked(SocketReading(
            parser: FrameParser(role: .client, maximumFrameSize: options.maximumMessageSize, allowsCompression: compression != nil),
            assembler: MessageAssembler(maximumMessageSize: options.maximumMessageSize, compression: compression)))
        buffer.whenRoom { [weak self] in self?.resumeReading() }
    }

    /// Starts reading `inbound` (the bytes after the `101`; see ``startReading(_:)``) and the
    /// keep-alive pings.
    func start(reading inbound: ByteStream) {
        var tasks: [Task<Void, Never>] = []
        if let pulling = startReading(inbound) { tasks.append(pulling) }
        if let interval = options.pingInterval {
            tasks.append(Task { await self.keepAlive(every: interval) })
        }
        let ended = state.withLock { state in
            state.tasks = tasks
            return state.outcome != nil
        }
        if ended {
            // It ended before reading began: reading stops as `end(_:)` would have stopped it.
            for task in tasks { task.cancel() }
            stopReading()
        }
    }

    var isEnded: Bool { state.withLock { $0.outcome != nil } }

    // MARK: - Writing

    /// Sends `message` as one frame in its turn. With the context taken over, ``frame(for:)`` runs
    /// in the turn, so that messages are compressed in the order they are sent; otherwise before
    /// it, out of the way of other senders.
    /// - Throws: ``CourierError``: the socket closed or failed, or the connection failed.
    func send(_ message: WebSocketMessage) async throws(CourierError) {
        if let compression, !compression.clientNoContextTakeover {
            try await write(making: { frame(for: message) })
        } else {
            let outgoing = frame(for: message)
            try await write(making: { outgoing })
        }
    }

    /// What ``sendNow(_:)`` came to.
    enum Immediate {
        /// Written.
        case sent
        /// Not begun: another send has the turn, or the message is compressed before its turn;
        /// ``send(_:)`` does it all.
        case busy
        /// The turn is taken and the frame made, but the connection cannot take it now:
        /// ``finish(_:)`` writes it, waiting, and gives the turn back.
        case holding(Outgoing)
    }

    /// Sends `message` without suspending when nothing stands in the way: no other send has the
    /// turn and the connection has room (``UpgradedConnection/writeIfReady(count:_:)``).
    /// - Throws: ``CourierError``: the socket is closing, closed or failed (nothing begun).
    func sendNow(_ message: WebSocketMessage) throws(CourierError) -> Immediate {
        // A message compressed on its own is compressed before its turn, out of other senders'
        // way: ``send(_:)`` does that.
        if compression?.clientNoContextTakeover == true, offersToDeflater(message.byteCount) { return .busy }
        var spare: UInt32?
        switch enter(allowed: { !$0.closeSent }) {
        case .refused(let error): throw error
        case .wait: return .busy
        case .turn(let kept): spare = kept
        }
        let outgoing = frame(for: message)
        // The key drawn with the turn's own locks: none of its own.
        guard outgoing.writeIfReady(to: connection, mask: Self.mask(from: &spare)) else { return .holding(outgoing) }
        releaseTurn(keeping: spare)
        return .sent
    }

    /// `message` as one frame: compressed when the server accepted compression, the message is
    /// at least ``WebSocketCompression/minimumSize`` and compressing makes it shorter; with the
    /// context taken over, the messages compressed before it are its history, and it joins them
    /// (then it is called in the writing turn, ``send(_:)``).
    func frame(for message: WebSocketMessage) -> Outgoing {
        let opcode: WebSocketOpcode
        let payload: Data
        switch message {
        case .text(let text):
            // Not to be compressed: written from the string's own bytes, with no copy between.
            guard offersToDeflater(text.utf8.count) else { return .text(text) }
            (opcode, payload) = (.text, Data(text.utf8))
        case .binary(let data): (opcode, payload) = (.binary, data)
        }
        if let compression, offersToDeflater(payload.count) {
            if compression.clientNoContextTakeover {
                let compressed = Deflater.compress(payload, windowBits: compression.clientMaxWindowBits)
                if compressed.count < payload.count { return .frame(WebSocketFrame(opcode, payload: Data(compressed), isCompressed: true)) }
            } else {
                let compressed: [UInt8]? = sentContext.withLock { context in
                    var kept = context.take() ?? Deflater.Context(windowBits: compression.clientMaxWindowBits)
                    let compressed = Deflater.compress(payload, context: &kept)
                    // A message sent as it is never reaches the server's inflater: nothing may
                    // refer back into it, or past it.
                    if compressed.count >= payload.count { kept.reset() }
                    context = kept
                    return compressed.count < payload.count ? compressed : nil
                }
                if let compressed { return .frame(WebSocketFrame(opcode, payload: Data(compressed), isCompressed: true)) }
            }
        }
        return .frame(WebSocketFrame(opcode, payload: payload))
    }

    /// Whether a message of `count` bytes goes to the deflater: the server accepted compression
    /// and the message is not empty and at least ``WebSocketCompression/minimumSize``.
    func offersToDeflater(_ count: Int) -> Bool {
        guard compression != nil, let offered = options.compression else { return false }
        return count > 0 && count >= offered.minimumSize
    }

    /// What a send writes: a frame, or a text message sent uncompressed, encoded from its string.
    enum Outgoing {
        case frame(WebSocketFrame)
        case text(String)

        /// How many bytes it takes on the wire, masked.
        var wireCount: Int {
            switch self {
            case .frame(let frame): WebSocketFrame.wireCount(payload: frame.payload.count, masked: true)
            case .text(let text): WebSocketFrame.wireCount(payload: text.utf8.count, masked: true)
            }
        }

        /// Encodes it into `wire` (``wireCount`` bytes), masked with `mask`.
        func encode(into wire: UnsafeMutableRawBufferPointer, mask: UInt32) {
            switch self {
            case .frame(let frame):
                frame.encode(into: wire, mask: mask)
            case .text(let text):
                let encoded: Void? = text.utf8.withContiguousStorageIfAvailable { bytes in
                    WebSocketFrame.encode(.text, payload: UnsafeRawBufferPointer(bytes), mask: mask, into: wire)
                }
                if encoded == nil {
                    Data(text.utf8).withUnsafeBytes { WebSocketFrame.encode(.text, payload: $0, mask: mask, into: wire) }
                }
            }
        }

        /// Writes it to `connection`, masked with `mask`: encoded once, into the transport's buffer.
        func write(to connection: any UpgradedConnection, mask: UInt32) async throws {
            try await connection.write(count: wireCount) { encode(into: $0, mask: mask) }
        }

        /// Writes it now when `connection` can take it without waiting.
        func writeIfReady(to connection: any UpgradedConnection, mask: UInt32) -> Bool {
            connection.writeIfReady(count: wireCount) { encode(into: $0, mask: mask) }
        }
    }

    /// Sends `frame` in its turn, when `allowed` says the state lets it go (checked as it queues).
    /// - Throws: ``CourierError``: the socket closed or failed, or the connection failed.
    func write(_ frame: WebSocketFrame, allowed: (inout State) -> Bool = { !$0.closeSent }) async throws(CourierError) {
        try await write(making: { .frame(frame) }, allowed: allowed)
    }

    /// Sends the frame `make` gives in the writing turn, when `allowed` says the state lets it go
    /// (checked as it queues).
    private func write(making make: () -> Outgoing, allowed: (inout State) -> Bool = { !$0.closeSent }) async throws(CourierError) {
        let entry = enter(allowed: allowed)
        switch entry {
        case .refused(let error): throw error
        case .turn: break
        case .wait: await takeTurn()
        }
        if case .wait = entry, case .failure(let error) = state.withLock({ $0.outcome }) {
            releaseTurn()
            throw error
        }
        try await finish(make())
    }

    /// What ``enter(allowed:)`` found: the turn comes with the spare masking key, if one was left.
    private enum Entry { case refused(CourierError), turn(UInt32?), wait }

    /// One lock checks the state (`allowed` says whether it lets a frame go) and, when nobody
    /// writes, takes the turn.
    private func enter(allowed: (inout State) -> Bool) -> Entry {
        state.withLock { state in
            if let refused = refusal(&state, allowed: allowed) { return .refused(refused) }
            guard state.writing else {
                state.writing = true
                return .turn(state.spareMask.take())
            }
            return .wait
        }
    }

    /// Why nothing more may be sent, if so: the socket failed, ended, or `allowed` says no.
    func refusal(_ state: inout State, allowed: (inout State) -> Bool) -> CourierError? {
        if case .failure(let error) = state.outcome { return error }
        guard state.outcome == nil, allowed(&state) else {
            return CourierError(
                .webSocket(WebSocketFailure(.closed, message: "the socket is closed or closing; nothing more can be sent")), request: request)
        }
        return nil
    }

    /// Writes `outgoing` with the turn held, then gives the turn back.
    /// - Throws: ``CourierError``: the connection failed.
    func finish(_ outgoing: Outgoing) async throws(CourierError) {
        defer { releaseTurn() }
        try await write(holding: outgoing)
    }

    /// Writes `outgoing` with the turn held, keeping the turn.
    /// - Throws: ``CourierError``: the connection failed (the socket then fails too, unless its
    ///   closing handshake began).
    func write(holding outgoing: Outgoing) async throws(CourierError) {
        do {
            try await outgoing.write(to: connection, mask: nextMask())
        } catch {
            let failure = lost("the connection failed while a frame was written", underlying: error)
            // Once a close frame is on its way the end is the closing handshake's to decide: a
            // server may close the connection as soon as it sent its own close frame.
            if !state.withLock({ $0.closeSent }) { end(.failure(failure)) }
            throw failure
        }
    }

    /// A masking key from the system's secure generator (RFC 6455 §5.3 asks for a strong source
    /// of entropy), for a writer holding the turn: each draw of 64 bits gives two keys, so half
    /// the frames cost no system call.
    private func nextMask() -> UInt32 {
        var spare = state.withLock { $0.spareMask.take() }
        let key = Self.mask(from: &spare)
        if let spare { state.withLock { $0.spareMask = spare } }
        return key
    }

    /// `spare` when there is one (then `nil`), else the first half of 64 new random bits (the
    /// second half left in `spare`).
    static func mask(from spare: inout UInt32?) -> UInt32 {
        if let key = spare.take() { return key }
        var generator = SystemRandomNumberGenerator()
        let bits = generator.next()
        spare = UInt32(truncatingIfNeeded: bits >> 32)
        return UInt32(truncatingIfNeeded: bits)
    }

    private func takeTurn() async {
        let mine = state.withLock { state in
            guard state.writing else {
                state.writing = true
                return true
            }
            return false
        }
        if mine { return }
        await withCheckedContinuation { continuation in
            let mine = state.withLock { state in
                guard state.writing else {
                    state.writing = true
                    return true
                }
                state.turns.append(.task(continuation))
                return false
            }
            if mine { continuation.resume() }
        }
    }

    /// Gives the turn to the next writer in line, leaving `spare` (a masking key not used) for it:
    /// a waiting sender is resumed, queued messages are written by a task of their own.
    func releaseTurn(keeping spare: UInt32? = nil) {
        if let pending = passTurn(keeping: spare) { writeQueued(pending) }
    }

    /// Gives the turn to the next in line: a waiting sender is resumed (`nil`), a queued message
    /// is returned to the caller, who keeps the turn to write it; with nobody in line the turn
    /// is free (`nil`).
    func passTurn(keeping spare: UInt32? = nil) -> Pending? {
        let next = state.withLock { state -> Turn? in
            if let spare { state.spareMask = spare }
            guard let next = state.turns.popFirst() else {
                state.writing = false
                return nil
            }
            if case .queued(_, let bytes) = next { state.queuedBytes -= bytes }
            return next
        }
        switch next {
        case .task(let continuation):
            continuation.resume()
            return nil
        case .queued(let pending, _): return pending
        case nil: return nil
        }
    }

    // MARK: - Pings

    /// Sends a ping and waits for its pong, up to ``WebSocketOptions/pingTimeout``; a peer that
    /// does not answer fails the socket.
    func ping() async throws(CourierError) {
        let id = state.withLock { state in
            defer { state.nextPing &+= 1 }
            state.pings[state.nextPing] = .waiting(nil)
            return state.nextPing
        }
        var payload = Data(count: 8)
        for index in 0..<8 { payload[index] = UInt8(truncatingIfNeeded: id >> UInt64(56 - 8 * index)) }
        do {
            try await write(WebSocketFrame(.ping, payload: payload))
        } catch {
            _ = state.withLock { $0.pings.removeValue(forKey: id) }
            throw error
        }
        // The time a pong may take counts only while the socket is read: while the read loop
        // waits for the caller to take a message, the pong may be behind it, and a slow reader
        // is not a dead peer.
        var answered = false
        while !answered {
            answered = await withTaskGroup(of: Bool.self) { group in
                group.addTask { await self.pong(id) }
                group.addTask { [clock, options] in
                    try? await sleep(on: clock, for: options.pingTimeout, as: .webSocketPing)
                    return false
                }
                let first = await group.next() ?? false
                group.cancelAll()
                return first
            }
            if answered || Task.isCancelled || isEnded || !buffer.isHoldingWriter { break }
        }
        _ = state.withLock { $0.pings.removeValue(forKey: id) }
        if answered { return }
        if Task.isCancelled || isEnded { throw cancelled() }
        let failure = CourierError(
            .webSocket(WebSocketFailure(.pingTimedOut, message: "the peer did not answer a ping within \(options.pingTimeout)")),
            request: request)
        end(.failure(failure))
        throw failure
    }

    /// Waits for the pong of ping `id`: `true` when it arrived, `false` when the wait was cancelled.
    private func pong(_ id: UInt64) async -> Bool {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now: Bool? = state.withLock { state in
                    switch state.pings[id] {
                    case .arrived: return true
                    case .waiting: break
                    case .none: return false
                    }
                    if Task.isCancelled { return false }
                    state.pings[id] = .waiting(continuation)
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            // The slot stays: a pong that arrives after this wait still counts for the next one.
            let waiting = state.withLock { state -> CheckedContinuation<Bool, Never>? in
                guard case .waiting(let continuation?) = state.pings[id] else { return nil }
                state.pings[id] = .waiting(nil)
                return continuation
            }
            waiting?.resume(returning: false)
        }
    }

    /// A pong arrived: wakes the ping it answers, if any.
    func received(pong payload: Data) {
        guard payload.count == 8 else { return }
        let id = payload.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let waiting = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            guard case .waiting(let continuation) = state.pings[id] else { return nil }
            state.pings[id] = continuation == nil ? .arrived : nil
            return continuation
        }
        waiting?.resume(returning: true)
    }

    private func keepAlive(every interval: Duration) async {
        while !isEnded {
            do {
                try await sleep(on: clock, for: interval, as: .webSocketPing)
            } catch {
                return
            }
            do {
                try await ping()
            } catch {
                return
            }
        }
    }

    // MARK: - Closing

    /// Starts the closing handshake (unless one began) and waits for the end, at most
    /// ``WebSocketOptions/closeTimeout`` for the peer's close frame.
    func close(_ code: WebSocketCloseCode, reason: String) async {
        let first = WebSocketClose(initiator: .client, code: code, reason: reason)
        let starts = state.withLock { state in
            guard state.outcome == nil, !state.closeSent else { return false }
            if state.firstClose == nil { state.firstClose = first }
            return true
        }
        if starts {
            // Nothing more is read out to the caller: what is buffered stays readable.
            buffer.finish(nil)
            do {
                try await write(WebSocketFrame(.close, payload: Self.closePayload(code, reason))) { state in
                    defer { state.closeSent = true }
                    return !state.closeSent
                }
            } catch {
                // Another close went first, or the socket ended: wait for the end all the same.
            }
        }
        let timer = Task { [clock, options] in
            do {
                try await sleep(on: clock, for: options.closeTimeout, as: .webSocketClose)
            } catch {
                return
            }
            self.end(.failure(CourierError(
                .webSocket(WebSocketFailure(
                    .closeTimedOut, message: "the peer did not answer the close frame within \(options.closeTimeout)", closeCode: code)),
                request: self.request)))
        }
        adopt(timer)
        _ = await withTaskCancellationHandler {
            await outcome()
        } onCancel: {
            self.cancel()
        }
        timer.cancel()
    }

    /// Keeps `task` to be cancelled when the socket ends (at once, if it has).
    func adopt(_ task: Task<Void, Never>) {
        let ended = state.withLock { state in
            if state.outcome == nil { state.tasks.append(task) }
            return state.outcome != nil
        }
        if ended { task.cancel() }
    }

    /// The payload of a close frame: the code, then the reason's UTF-8.
    static func closePayload(_ code: WebSocketCloseCode?, _ reason: String) -> Data {
        guard let code else { return Data() }
        return Data([UInt8(code.rawValue >> 8), UInt8(truncatingIfNeeded: code.rawValue)]) + Data(reason.utf8)
    }

    /// How the socket ended, once it has (waiting until then).
    func outcome() async -> Result<WebSocketClose, CourierError> {
        if let outcome = state.withLock({ $0.outcome }) { return outcome }
        return await withCheckedContinuation { continuation in
            let outcome = state.withLock { state in
                if state.outcome == nil { state.outcomeWaiters.append(continuation) }
                return state.outcome
            }
            if let outcome { continuation.resume(returning: outcome) }
        }
    }

    /// Ends the socket with `outcome` (the first end is kept): closes the connection, ends the
    /// messages, wakes every waiter and stops the tasks.
    func end(_ outcome: Result<WebSocketClose, CourierError>) {
        let taken = state.withLock { state -> State? in
            guard state.outcome == nil else { return nil }
            state.outcome = outcome
            let taken = state
            state.outcomeWaiters = []
            state.turns = FirstInLine()
            state.queuedBytes = 0
            state.pings = [:]
            state.tasks = []
            return taken
        }
        guard let taken else { return }
        connection.close()
        stopReading()
        if case .failure(let error) = outcome { buffer.finish(error) } else { buffer.finish(nil) }
        for waiter in taken.outcomeWaiters { waiter.resume(returning: outcome) }
        // Senders waiting for a turn wake to the end; queued messages are not sent (``closed``
        // says why).
        for case .task(let continuation) in taken.turns.waiting { continuation.resume() }
        for case .waiting(let continuation?) in taken.pings.values { continuation.resume(returning: false) }
        for task in taken.tasks { task.cancel() }
    }

    /// Ends the socket at once because a task waiting on it was cancelled.
    func cancel() {
        end(.failure(cancelled()))
    }

    func cancelled() -> CourierError {
        if case .failure(let error) = state.withLock({ $0.outcome }) { return error }
        return CourierError(.cancelled, request: request)
    }

    func lost(_ message: String, underlying: (any Error)? = nil) -> CourierError {
        CourierError(.webSocket(WebSocketFailure(.connectionLost, message: message, closeCode: .abnormalClosure)), request: request, underlyingError: underlying)
    }
}

extension WebSocketMessage {
    /// How many bytes of application data the message holds (a text's in UTF-8).
    var byteCount: Int {
        switch self {
        case .text(let text): text.utf8.count
        case .binary(let data): data.count
        }
    }
}
