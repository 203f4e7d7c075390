import CourierCore
import NIOConcurrencyHelpers
import NIOCore

/// HTTP/1.1 connections kept open between hops, per origin: at most
/// ``NIOTransport/Configuration/connectionsPerHost`` open (or opening) at once; a hop that finds
/// none free waits in line and leaves the line at once when its task is cancelled; an idle
/// connection is closed after ``NIOTransport/Configuration/idleTimeout``. The most recently used
/// idle connection is lent first (it is the least likely to have been closed by the server).
final class ConnectionPool: Sendable {
    typealias Opener = @Sendable (Origin) -> EventLoopFuture<HTTP1Connection>

    /// A connection lent for one hop, and whether it was opened for it.
    struct Lease: Sendable {
        var connection: HTTP1Connection
        var isNew: Bool
    }

    private struct Waiter {
        var id: UInt64
        var continuation: CheckedContinuation<Ticket, any Error>
    }

    /// What a waiter is given when it leaves the line: a connection, or leave to open one.
    private enum Ticket: Sendable {
        case connection(HTTP1Connection)
        case open
    }

    private struct Idle {
        var connection: HTTP1Connection
        /// Which idle spell this is, so that a timer of an earlier spell closes nothing.
        var spell: UInt64
    }

    private struct PerOrigin {
        var idle: [Idle] = []
        /// Connections lent, idle or being opened.
        var open = 0
        var waiters: [Waiter] = []
    }

    private struct State {
        var origins: [Origin: PerOrigin] = [:]
        var nextID: UInt64 = 0
        var isShutDown = false
    }

    private let state = NIOLockedValueBox(State())
    private let limit: Int
    private let idleTimeout: TimeAmount
    private let opener: Opener

    init(connectionsPerHost: Int, idleTimeout: TimeAmount, opener: @escaping Opener) {
        self.limit = max(1, connectionsPerHost)
        self.idleTimeout = idleTimeout
        self.opener = opener
    }

    /// A connection to `origin`: an idle one, a new one, or the next one freed.
    /// - Throws: The failure to connect, `CancellationError` when the task is cancelled while it
    ///   waits, ``NIOTransportError/shutDown`` after ``shutdown()``.
    func lease(_ origin: Origin) async throws -> Lease {
        enum Step {
            case reuse(HTTP1Connection)
            case open
            case wait
            case shutDown
        }
        let step = state.withLockedValue { state -> Step in
            guard !state.isShutDown else { return .shutDown }
            var entry = state.origins[origin, default: PerOrigin()]
            defer { state.origins[origin] = entry }
            // A closed one is dropped here; its place is freed when its close is seen (`forget`).
            while let idle = entry.idle.popLast() {
                if idle.connection.isOpen { return .reuse(idle.connection) }
            }
            if entry.open < limit {
                entry.open += 1
                return .open
            }
            return .wait
        }
        switch step {
        case .shutDown: throw NIOTransportError.shutDown
        case .reuse(let connection): return Lease(connection: connection, isNew: false)
        case .open: return try await open(origin)
        case .wait:
            switch try await wait(for: origin) {
            case .connection(let connection): return Lease(connection: connection, isNew: false)
            case .open: return try await open(origin)
            }
        }
    }

    /// Opens a connection counted already; a failure frees its place for the next waiter.
    private func open(_ origin: Origin) async throws -> Lease {
        let future = opener(origin)
        do {
            let connection = try await future.getCancellable { result in
                // The hop left while its connection was being made: the pool keeps it, or frees
                // its place when it could not be made.
                switch result {
                case .success(let connection):
                    self.watch(connection)
                    self.release(connection, reusable: true)
                case .failure:
                    self.freePlace(origin)
                }
            }
            watch(connection)
            return Lease(connection: connection, isNew: true)
        } catch {
            // Cancelled: the connection, if it is made, is released when it is (above).
            if !(error is CancellationError) { freePlace(origin) }
            throw error
        }
    }

    /// Makes the pool forget `connection` once it closes (the server closed it, or it failed).
    private func watch(_ connection: HTTP1Connection) {
        connection.channel.closeFuture.whenComplete { _ in
            self.forget(connection)
        }
    }

    private func wait(for origin: Origin) async throws -> Ticket {
        let id = state.withLockedValue { state in
            state.nextID += 1
            return state.nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let queued = state.withLockedValue { state -> Bool in
                    guard !Task.isCancelled, !state.isShutDown else { return false }
                    state.origins[origin, default: PerOrigin()].waiters.append(Waiter(id: id, continuation: continuation))
                    return true
                }
                if !queued { continuation.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            let waiter = state.withLockedValue { state -> Waiter? in
                guard let index = state.origins[origin]?.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.origins[origin]?.waiters.remove(at: index)
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Takes `connection` back after a hop: lent to the next waiter or kept idle when `reusable`,
    /// closed otherwise (its place then goes to the next waiter, who opens a new one).
    func release(_ connection: HTTP1Connection, reusable: Bool) {
        guard reusable, connection.isOpen else {
            connection.close()
            return
        }
        enum Step {
            case hand(Waiter)
            case idle(UInt64)
            case close
        }
        let step = state.withLockedValue { state -> Step in
            guard !state.isShutDown else { return .close }
            if let waiter = state.origins[connection.origin]?.waiters.first {
                state.origins[connection.origin]?.waiters.removeFirst()
                return .hand(waiter)
            }
            state.nextID += 1
            state.origins[connection.origin, default: PerOrigin()].idle.append(Idle(connection: connection, spell: state.nextID))
            return .idle(state.nextID)
        }
        switch step {
        case .hand(let waiter): waiter.continuation.resume(returning: .connection(connection))
        case .close: connection.close()
        case .idle(let spell):
            connection.channel.eventLoop.scheduleTask(in: idleTimeout) {
                self.closeIfIdle(connection, spell: spell)
            }
        }
    }

    private func closeIfIdle(_ connection: HTTP1Connection, spell: UInt64) {
        let expired = state.withLockedValue { state -> Bool in
            guard let index = state.origins[connection.origin]?.idle.firstIndex(where: { $0.spell == spell }) else { return false }
            state.origins[connection.origin]?.idle.remove(at: index)
            return true
        }
        // Closing forgets it (its place goes to a waiter, if any).
        if expired { connection.close() }
    }

    /// A connection closed: its place is free (a waiter, if any, opens a new one).
    private func forget(_ connection: HTTP1Connection) {
        state.withLockedValue { state in
            if let index = state.origins[connection.origin]?.idle.firstIndex(where: { $0.connection === connection }) {
                state.origins[connection.origin]?.idle.remove(at: index)
            }
        }
        freePlace(connection.origin)
    }

    private func freePlace(_ origin: Origin) {
        let waiter = state.withLockedValue { state -> Waiter? in
            guard var entry = state.origins[origin] else { return nil }
            defer { state.origins[origin] = entry.open == 0 && entry.waiters.isEmpty && entry.idle.isEmpty ? nil : entry }
            if !entry.waiters.isEmpty { return entry.waiters.removeFirst() }
            entry.open -= 1
            return nil
        }
        waiter?.continuation.resume(returning: .open)
    }

    /// Closes every idle connection and refuses new leases; hops under way finish.
    func shutdown() -> [HTTP1Connection] {
        let (idle, waiters) = state.withLockedValue { state -> ([HTTP1Connection], [Waiter]) in
            state.isShutDown = true
            let idle = state.origins.values.flatMap { $0.idle.map(\.connection) }
            let waiters = state.origins.values.flatMap(\.waiters)
            for origin in state.origins.keys {
                state.origins[origin]?.idle = []
                state.origins[origin]?.waiters = []
            }
            return (idle, waiters)
        }
        for waiter in waiters { waiter.continuation.resume(throwing: NIOTransportError.shutDown) }
        for connection in idle { connection.close() }
        return idle
    }

    /// How many connections are open (lent, idle or being opened) to `origin`; for tests.
    func openCount(_ origin: Origin) -> Int {
        state.withLockedValue { $0.origins[origin]?.open ?? 0 }
    }
}

/// Where a wait for a connection being made stands.
private enum ConnectWait {
    case notYet
    case waiting(CheckedContinuation<HTTP1Connection, any Error>)
    case cancelled
    case done
}

extension EventLoopFuture where Value == HTTP1Connection {
    /// The connection, or `CancellationError` as soon as the task is cancelled; the outcome that
    /// arrives after that goes to `orphan`.
    func getCancellable(orphan: @escaping @Sendable (Result<HTTP1Connection, any Error>) -> Void) async throws -> HTTP1Connection {
        let box = NIOLockedValueBox(ConnectWait.notYet)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let cancelled = box.withLockedValue { waiting -> Bool in
                    if case .cancelled = waiting { return true }
                    waiting = .waiting(continuation)
                    return false
                }
                if cancelled { continuation.resume(throwing: CancellationError()) }
                self.whenComplete { result in
                    let continuation = box.withLockedValue { waiting -> CheckedContinuation<HTTP1Connection, any Error>? in
                        guard case .waiting(let continuation) = waiting else { return nil }
                        waiting = .done
                        return continuation
                    }
                    if let continuation {
                        continuation.resume(with: result)
                    } else {
                        orphan(result)
                    }
                }
            }
        } onCancel: {
            let continuation = box.withLockedValue { waiting -> CheckedContinuation<HTTP1Connection, any Error>? in
                switch waiting {
                case .waiting(let continuation):
                    waiting = .cancelled
                    return continuation
                case .notYet:
                    waiting = .cancelled
                    return nil
                case .cancelled, .done:
                    return nil
                }
            }
            continuation?.resume(throwing: CancellationError())
        }
    }
}
