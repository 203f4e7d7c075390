import CourierCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension SocketEngine {
    /// Sends `message` without waiting (``WebSocket/enqueue(_:)``): written at once when no other
    /// write has the turn and the connection has room; otherwise queued in the line of turns, so
    /// that it goes after every send asked for before it and before every one after it.
    /// - Throws: ``CourierError``: the socket is closing, closed or failed, or the queue holds
    ///   ``WebSocketOptions/maximumQueuedBytes`` already (``WebSocketFailure/Kind/sendQueueFull``);
    ///   then nothing is queued.
    func enqueue(_ message: WebSocketMessage) throws(CourierError) {
        let bytes = message.byteCount
        // Compressed on its own: before the turn, out of other senders' way (as `send` does).
        let made: Outgoing? =
            if compression?.clientNoContextTakeover == true, offersToDeflater(bytes) { frame(for: message) } else { nil }
        let limit = options.maximumQueuedBytes
        enum Entry { case refused(CourierError), full, turn(UInt32?), queued }
        let entry = state.withLock { state -> Entry in
            if let refused = refusal(&state, allowed: { !$0.closeSent }) { return .refused(refused) }
            guard state.writing else {
                state.writing = true
                return .turn(state.spareMask.take())
            }
            guard bytes <= limit - state.queuedBytes else { return .full }
            state.queuedBytes += bytes
            state.turns.append(.queued(made.map { .made($0) } ?? .message(message), bytes: bytes))
            return .queued
        }
        switch entry {
        case .refused(let error): throw error
        case .full:
            throw CourierError(
                .webSocket(WebSocketFailure(
                    .sendQueueFull,
                    message: "\(bytes) bytes more would take the messages waiting to be sent past the queue's limit of \(limit) bytes; nothing was queued")),
                request: request)
        case .turn(var spare):
            let outgoing = made ?? frame(for: message)
            if outgoing.writeIfReady(to: connection, mask: Self.mask(from: &spare)) {
                releaseTurn(keeping: spare)
            } else {
                if let spare { state.withLock { $0.spareMask = spare } }
                write(holdingTurn: outgoing)
            }
        case .queued: break
        }
    }

    /// Writes a queued message in its turn (it holds the turn now), in a task of its own: the
    /// connection may make it wait.
    func writeQueued(_ pending: Pending) {
        Task { await self.drain(from: pending) }
    }

    /// Writes `outgoing` in a task, with the turn held, then the messages queued behind it.
    private func write(holdingTurn outgoing: Outgoing) {
        Task { await self.drain(from: .made(outgoing)) }
    }

    /// Writes `pending` and every message queued right behind it, in this one task, holding the
    /// turn; then passes the turn on (to a waiting sender, or nobody). A failed write ends the
    /// socket (``write(holding:)``), and with it what is queued; during the closing handshake,
    /// which decides the end itself, the line goes on to the close frame, each write failing.
    private func drain(from pending: Pending) async {
        var next: Pending? = pending
        while let pending = next {
            let outgoing: Outgoing =
                switch pending {
                case .made(let outgoing): outgoing
                case .message(let message): frame(for: message)
                }
            try? await write(holding: outgoing)
            next = passTurn()
        }
    }
}
