import CourierCore
import NIOConcurrencyHelpers
import NIOCore

/// Connections kept open between hops, per origin. HTTP/1.1: at most
/// ``NIOTransport/Configuration/connectionsPerHost`` open (or opening) at once, one hop each; a
/// hop that finds none free waits in line and leaves the line at once when its task is
/// cancelled; the most recently used idle connection is lent first (the least likely to have been
/// closed by the server). HTTP/2: hops share a connection as streams, so once one is up every
/// hop to that origin goes on it (waiters included) until the server sends `GOAWAY`. Idle
/// connections close after ``NIOTransport/Configuration/idleTimeout``.
final class ConnectionPool: Sendable {
    typealias Opener = @Sendable (Origin, HopTimings.Recorder?) -> EventLoopFuture<PooledConnection>

    /// What a hop is lent.
    enum Lease: Sendable {
        /// An HTTP/1.1 connection for this hop alone, and whether it was opened for it.
        case http1(HTTP1Connection, isNew: Bool)
        /// An HTTP/2 connection to open a stream on.
        case http2(HTTP2Connection, isNew: Bool)
    }

    private struct Waiter {
        var id: UInt64
        var continuation: CheckedContinuation<Ticket, any Error>
    }

    /// What a waiter is given when it leaves the line: a connection, leave to open one, or the
    /// news that an HTTP/2 connection is up (it asks again).
    private enum Ticket: Sendable {
        case connection(HTTP1Connection)
        case open
        case askAgain
    }

    private struct Idle {
        var connection: HTTP1Connection
        /// Which idle spell this is, so that a timer of an earlier spell closes nothing.
        var spell: UInt64
    }

    private struct PerOrigin {
        var idle: [Idle] = []
        /// HTTP/2 connections up (the newest last).
        var http2: [HTTP2Connection] = []
        /// Connections lent, idle, shared or being opened.
        var open = 0
        var waiters: [Waiter] = []
        /// Whether a connection made here told which protocol the origin speaks.
        var protocolKnown = false
        /// Whether the first connection is being made to an origin that may speak HTTP/2: the
        /// hops after it wait for it rather than open connections HTTP/2 would not need.
        var probing = false
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

    /// Whether `https` origins may answer with HTTP/2.
    private let mayShare: Bool

    init(connectionsPerHost: Int, idleTimeout: TimeAmount, mayShare: Bool, opener: @escaping Opener) {
        self.mayShare = mayShare
        self.limit = max(1, connectionsPerHost)
        self.idleTimeout = idleTimeout
        self.opener = opener
    }

    /// A connection to `origin`: a shared HTTP/2 one, an idle HTTP/1.1 one, a new one, or the
    /// next one freed.
    /// - Throws: The failure to connect, `CancellationError` when the task is cancelled while it
    ///   waits, ``NIOTransportError/shutDown`` after ``shutdown()``.
    /// - Parameter timings: Where the hop records its wait for a connection, and the phases of
    ///   the one it opens.
    func lease(_ origin: Origin, timings: HopTimings.Recorder? = nil) async throws -> Lease {
        enum Step {
            case reuse(HTTP1Connection)
            case share(HTTP2Connection)
            case open
            case wait
            case shutDown
        }
        while true {
            let step = state.withLockedValue { state -> Step in
                guard !state.isShutDown else { return .shutDown }
                var entry = state.origins[origin, default: PerOrigin()]
                defer { state.origins[origin] = entry }
                if let shared = entry.http2.last(where: \.isUsable) { return .share(shared) }
                // A closed one is dropped here; its place is freed when its close is seen (`forget`).
                while let idle = entry.idle.popLast() {
                    if idle.connection.isOpen { return .reuse(idle.connection) }
                }
                let mayShare = self.mayShare && origin.isSecure && !entry.protocolKnown
                if mayShare && entry.probing { return .wait }
                if entry.open < limit {
                    entry.open += 1
                    if mayShare { entry.probing = true }
                    return .open
                }
                return .wait
            }
            switch step {
            case .shutDown: throw NIOTransportError.shutDown
            case .reuse(let connection): return .http1(connection, isNew: false)
            case .share(let connection): return .http2(connection, isNew: false)
            case .open: return try await open(origin, timings: timings)
            case .wait:
                // Queued from the first wait to the connection: a wait that ends in asking
                // again keeps the time it started.
                if timings?.timings.queued == nil { timings?.begin(.queued) }
                let woken = try await wait(for: origin)
                timings?.end(.queued)
                switch woken {
                case .connection(let connection): return .http1(connection, isNew: false)
                case .open: return try await open(origin, timings: timings)
                case .askAgain: continue
                }
            }
        }
    }

    /// Opens a connection counted already; a failure frees its place for the next waiter.
    private func open(_ origin: Origin, timings: HopTimings.Recorder?) async throws -> Lease {
        let future = opener(origin, timings)
        do {
            let connection = try await future.getCancellable { result in
                // The hop left while its connection was being made: the pool keeps it, or frees
                // its place when it could not be made.
                switch result {
                case .success(let connection):
                    self.adopt(connection)
                    if case .http1(let connection) = connection { self.release(connection, reusable: true) }
                case .failure:
                    self.freePlace(origin)
                    self.wakeProbeWaiters(origin)
                }
            }
            adopt(connection)
            switch connection {
            case .http1(let connection): return .http1(connection, isNew: true)
            case .http2(let connection): return .http2(connection, isNew: true)
            }
        } catch {
            // Cancelled: the connection, if it is made, is adopted when it is (above).
            if !(error is CancellationError) {
                freePlace(origin)
                // The hops that waited for this one to learn the protocol try for themselves.
                wakeProbeWaiters(origin)
            }
            throw error
        }
    }

    /// Watches a new connection's close (its place is freed then); an HTTP/2 one is shared from
    /// now on, and every hop waiting for this origin asks again.
    private func adopt(_ connection: PooledConnection) {
        connection.channel.closeFuture.whenComplete { _ in self.forget(connection) }
        let origin: Origin
        switch connection {
        case .http1(let made): origin = made.origin
        case .http2(let shared): origin = shared.origin
        }
        let waiters = state.withLockedValue { state -> [Waiter] in
            var entry = state.origins[origin, default: PerOrigin()]
            defer { state.origins[origin] = entry }
            if case .http2(let shared) = connection { entry.http2.append(shared) }
            let probed = entry.probing
            entry.protocolKnown = true
            entry.probing = false
            // Hops that waited for the protocol (or for any connection, now shareable) ask again.
            guard probed || !entry.http2.isEmpty else { return [] }
            defer { entry.waiters = [] }
            return entry.waiters
        }
        for waiter in waiters { waiter.continuation.resume(returning: .askAgain) }
    }

    /// The first connection to an origin that may speak HTTP/2 failed: its waiters ask again.
    private func wakeProbeWaiters(_ origin: Origin) {
        let waiters = state.withLockedValue { state -> [Waiter] in
            guard state.origins[origin]?.probing == true else { return [] }
            state.origins[origin]?.probing = false
            defer { state.origins[origin]?.waiters = [] }
            return state.origins[origin]?.waiters ?? []
        }
        for waiter in waiters { waiter.continuation.resume(returning: .askAgain) }
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
    private func forget(_ connection: PooledConnection) {
        state.withLockedValue { state in
            switch connection {
            case .http1(let connection):
                if let index = state.origins[connection.origin]?.idle.firstIndex(where: { $0.connection === connection }) {
                    state.origins[connection.origin]?.idle.remove(at: index)
                }
            case .http2(let connection):
                state.origins[connection.origin]?.http2.removeAll { $0 === connection }
            }
        }
        switch connection {
        case .http1(let connection): freePlace(connection.origin)
        case .http2(let connection): freePlace(connection.origin)
        }
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

    /// Closes every idle connection (and every HTTP/2 connection once its streams are done: they
    /// close now) and refuses new leases; hops under way on HTTP/1.1 finish.
    func shutdown() -> [any Channel] {
        let (idle, waiters) = state.withLockedValue { state -> ([any Channel], [Waiter]) in
            state.isShutDown = true
            let idle = state.origins.values.flatMap { $0.idle.map(\.connection.channel) + $0.http2.map(\.channel) }
            let waiters = state.origins.values.flatMap(\.waiters)
            for origin in state.origins.keys {
                state.origins[origin]?.idle = []
                state.origins[origin]?.http2 = []
                state.origins[origin]?.waiters = []
            }
            return (idle, waiters)
        }
        for waiter in waiters { waiter.continuation.resume(throwing: NIOTransportError.shutDown) }
        for channel in idle { channel.close(promise: nil) }
        return idle
    }

    /// How many connections are open (lent, idle, shared or being opened) to `origin`, and how
    /// many of them speak HTTP/2.
    struct Counts: Equatable {
        var open: Int
        var http2: Int
        /// Hops waiting in line for a connection.
        var waiting = 0
    }

    /// The counts for `origin`, for tests.
    func counts(_ origin: Origin) -> Counts {
        state.withLockedValue {
            let entry = $0.origins[origin]
            return Counts(open: entry?.open ?? 0, http2: entry?.http2.count ?? 0, waiting: entry?.waiters.count ?? 0)
        }
    }
}

/// Where a wait for a connection being made stands.
private enum ConnectWait {
    case notYet
    case waiting(CheckedContinuation<PooledConnection, any Error>)
    case cancelled
    case done
}

extension EventLoopFuture where Value == PooledConnection {
    /// The connection, or `CancellationError` as soon as the task is cancelled; the outcome that
    /// arrives after that goes to `orphan`.
    func getCancellable(orphan: @escaping @Sendable (Result<PooledConnection, any Error>) -> Void) async throws -> PooledConnection {
        let box = NIOLockedValueBox(ConnectWait.notYet)
        let connection = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let cancelled = box.withLockedValue { waiting -> Bool in
                    if case .cancelled = waiting { return true }
                    waiting = .waiting(continuation)
                    return false
                }
                if cancelled { continuation.resume(throwing: CancellationError()) }
                self.whenComplete { result in
                    let continuation = box.withLockedValue { waiting -> CheckedContinuation<PooledConnection, any Error>? in
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
            let continuation = box.withLockedValue { waiting -> CheckedContinuation<PooledConnection, any Error>? in
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
        // The loop took this lock before it resumed the wait: reading it again orders what the
        // loop made (the connection) before this task uses it in a way ThreadSanitizer sees too
        // (see `EventLoopFuture.handedOver()`).
        box.withLockedValue { _ in }
        return connection
    }
}
