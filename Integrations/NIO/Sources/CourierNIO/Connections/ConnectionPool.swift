import CourierCore
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// Connections kept open between hops, per origin: the I/O around a ``PoolStateMachine``, which
/// makes every decision (the rules are there). Each event takes the lock once, asks the machine,
/// and carries out its actions after the lock is released: resuming the hops that wait, opening
/// and closing connections, scheduling timers on the connections' event loops.
final class ConnectionPool: Sendable {
    typealias Opener = @Sendable (Origin, HopTimings.Recorder?) -> EventLoopFuture<PooledConnection>
    typealias ConnectionID = PoolStateMachine.ConnectionID
    typealias WaiterID = PoolStateMachine.WaiterID

    /// What a hop is lent.
    enum Lease: Sendable {
        /// An HTTP/1.1 connection for this hop alone (give it back with
        /// ``ConnectionPool/release(_:reusable:)``), and whether it was opened for it.
        case http1(HTTP1Connection, ConnectionID, isNew: Bool)
        /// An HTTP/2 connection to open one stream on (its end is counted by the connection).
        case http2(HTTP2Connection, isNew: Bool)
    }

    private struct Waiter {
        var timings: HopTimings.Recorder?
        var continuation: CheckedContinuation<Lease, any Error>?
        /// The outcome, when it came before the hop began to wait for it.
        var outcome: Result<Lease, any Error>?
    }

    private struct State {
        var machine: PoolStateMachine
        var connections: [ConnectionID: PooledConnection] = [:]
        var waiters: [WaiterID: Waiter] = [:]
        var nextWaiter = 0
        var shutdownWaiters: [CheckedContinuation<Void, Never>] = []
        var isClosed = false
    }

    private let state: NIOLockedValueBox<State>
    private let opener: Opener

    init(configuration: PoolStateMachine.Configuration, opener: @escaping Opener) {
        self.state = NIOLockedValueBox(State(machine: PoolStateMachine(configuration: configuration)))
        self.opener = opener
    }

    /// A connection to `origin`: a shared HTTP/2 one, an idle HTTP/1.1 one, a new one, or the
    /// next one freed.
    /// - Parameter timings: Where the hop records its wait in line, and the phases of the
    ///   connection opened for it.
    /// - Throws: The failure to connect (also while the origin backs off after one),
    ///   `CancellationError` when the task is cancelled while it waits,
    ///   ``NIOTransportError/shutDown`` after ``shutdown(gracePeriod:)``.
    func lease(_ origin: Origin, timings: HopTimings.Recorder? = nil, watch: HopWatch? = nil) async throws -> Lease {
        enum First {
            case served(Lease)
            case actions(WaiterID, [PoolStateMachine.Action])
        }
        // A hop whose task runs on one of the loops (``EventLoopTaskExecutor``) is lent a
        // connection on that loop first, and a new one is opened there.
        let loop = MultiThreadedEventLoopGroup.currentEventLoop.map { ObjectIdentifier($0) }
        let first = state.withLockedValue { state -> First in
            let waiter = state.nextWaiter
            state.nextWaiter += 1
            let actions = state.machine.lease(waiter, to: origin, now: .now(), preferring: loop)
            // The common case, decided in this one lock: an idle connection or a stream for it.
            if actions.count == 1 {
                switch actions[0] {
                case .lend(waiter, let id, let isNew):
                    if case .http1(let connection)? = state.connections[id], isNew || connection.isOpen {
                        return .served(.http1(connection, id, isNew: isNew))
                    }
                case .share(waiter, let id, let isNew):
                    if case .http2(let connection)? = state.connections[id] { return .served(.http2(connection, isNew: isNew)) }
                default:
                    break
                }
            }
            state.waiters[waiter] = Waiter(timings: timings)
            return .actions(waiter, actions)
        }
        let waiter: WaiterID
        let actions: [PoolStateMachine.Action]
        switch first {
        case .served(let lease): return lease
        case .actions(let id, let taken):
            waiter = id
            actions = taken
        }
        // In line behind other hops (no action: nothing to open, nothing free) goes straight to
        // waiting; otherwise the actions run, and may serve it at once.
        if !actions.isEmpty {
            run(actions)
            let served = state.withLockedValue { state -> Result<Lease, any Error>? in
                guard let outcome = state.waiters[waiter]?.outcome else { return nil }
                state.waiters[waiter] = nil
                return outcome
            }
            if let served { return try served.get() }
        }
        let queued = !actions.contains { if case .open(_, _, waiter) = $0 { true } else { false } }
        if queued, timings?.timings.queued == nil { timings?.begin(.queued) }
        defer { if queued { timings?.end(.queued) } }
        // A hop's idle timer that fires while it waits takes it out of the line, as a cancelled
        // task would.
        watch?.waiting { [weak self] in self?.event { $0.cancel(waiter) } }
        let lease = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Lease, any Error>) in
                let outcome = state.withLockedValue { state -> Result<Lease, any Error>? in
                    if let outcome = state.waiters[waiter]?.outcome {
                        state.waiters[waiter] = nil
                        return outcome
                    }
                    state.waiters[waiter]?.continuation = continuation
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            event { $0.cancel(waiter) }
        }
        // The loop that made the connection took this lock before it resumed the wait: taking it
        // again orders what it made before this task uses it, in a way ThreadSanitizer sees too
        // (see `EventLoopFuture.handedOver()`).
        state.withLockedValue { _ in }
        return lease
    }

    /// Takes back an HTTP/1.1 connection after a hop: lent to the next waiter or kept idle when
    /// `reusable`, closed otherwise.
    func release(_ id: ConnectionID, _ connection: HTTP1Connection, reusable: Bool) {
        enum Next {
            case done
            case resume(CheckedContinuation<Lease, any Error>)
            case actions([PoolStateMachine.Action])
        }
        let lease = Lease.http1(connection, id, isNew: false)
        let next = state.withLockedValue { state -> Next in
            let actions = state.machine.released(id, reusable: reusable, now: .now())
            // The common cases, without looking the connection up again: lent to the next hop
            // in line (handed over in this same lock), or idle.
            if actions.count == 1, case .lend(let waiter, id, isNew: false) = actions[0], state.waiters[waiter] != nil {
                guard let continuation = state.waiters[waiter]?.continuation else {
                    state.waiters[waiter]?.outcome = .success(lease)
                    return .done
                }
                state.waiters[waiter] = nil
                return .resume(continuation)
            }
            return .actions(actions)
        }
        switch next {
        case .done:
            return
        case .resume(let continuation):
            continuation.resume(returning: lease)
        case .actions(let actions):
            if actions.count == 1, case .schedule(id, let timer, let deadline) = actions[0] {
                connection.channel.eventLoop.scheduleTask(deadline: deadline) {
                    self.event { $0.timerFired(id, timer, now: .now()) }
                }
                return
            }
            run(actions)
        }
    }

    /// Nothing new starts: hops waiting fail with ``NIOTransportError/shutDown``, idle connections
    /// close, and hops under way finish; after `gracePeriod`, connections still busy are closed
    /// too (their hops fail, saying the transport was shut down). Returns once every connection
    /// is closed.
    func shutdown(gracePeriod: Duration) async {
        let loop = state.withLockedValue { $0.connections.values.first?.channel.eventLoop }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let actions = state.withLockedValue { state in
                state.shutdownWaiters.append(continuation)
                return state.machine.shutdown()
            }
            run(actions)
            let done = state.withLockedValue { state -> [CheckedContinuation<Void, Never>] in
                guard state.isClosed else { return [] }
                defer { state.shutdownWaiters = [] }
                return state.shutdownWaiters
            }
            for waiter in done { waiter.resume() }
            loop?.scheduleTask(in: TimeAmount(gracePeriod)) { self.closeAll() }
        }
    }

    /// Closes every connection left after the grace period: their hops fail, saying why.
    private func closeAll() {
        let channels = state.withLockedValue { $0.connections.values.map(\.channel) }
        for channel in channels {
            channel.pipeline.fireErrorCaught(NIOTransportError.shutDown)
            channel.close(promise: nil)
        }
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
        let counts = state.withLockedValue { $0.machine.counts(origin) }
        return Counts(open: counts.open, http2: counts.http2, waiting: counts.waiting)
    }

    // MARK: Carrying out

    /// Runs one event through the machine under the lock, then its actions without it.
    private func event(_ transition: (inout PoolStateMachine) -> [PoolStateMachine.Action]) {
        run(state.withLockedValue { transition(&$0.machine) })
    }

    private func run(_ actions: [PoolStateMachine.Action]) {
        for action in actions {
            switch action {
            case .lend(let waiter, let id, let isNew):
                guard case .http1(let connection)? = state.withLockedValue({ $0.connections[id] }) else { continue }
                // An idle connection whose close has not been seen yet (the server closed it as
                // it lay idle): forgotten now, and the hop asks again.
                if !isNew, !connection.isOpen {
                    run(
                        state.withLockedValue { state in
                            state.machine.closed(id, now: .now()) + state.machine.lease(waiter, to: connection.origin, now: .now())
                        })
                    continue
                }
                deliver(.success(.http1(connection, id, isNew: isNew)), to: waiter)
            case .share(let waiter, let id, let isNew):
                guard case .http2(let connection)? = state.withLockedValue({ $0.connections[id] }) else { continue }
                deliver(.success(.http2(connection, isNew: isNew)), to: waiter)
            case .fail(let waiter, let failure):
                deliver(.failure(Self.error(for: failure)), to: waiter)
            case .open(let id, let origin, let waiter):
                open(id, to: origin, timings: state.withLockedValue { $0.waiters[waiter]?.timings })
            case .close(let id):
                state.withLockedValue { $0.connections[id] }?.channel.close(promise: nil)
            case .schedule(let id, let timer, let deadline):
                guard let channel = state.withLockedValue({ $0.connections[id] })?.channel else { continue }
                channel.eventLoop.scheduleTask(deadline: deadline) {
                    self.event { $0.timerFired(id, timer, now: .now()) }
                }
            case .shutDown:
                let waiters = state.withLockedValue { state in
                    state.isClosed = true
                    defer { state.shutdownWaiters = [] }
                    return state.shutdownWaiters
                }
                for waiter in waiters { waiter.resume() }
            }
        }
    }

    /// Hands `outcome` to the hop: resumes it, or keeps the outcome for when it begins to wait.
    private func deliver(_ outcome: Result<Lease, any Error>, to waiter: WaiterID) {
        let continuation = state.withLockedValue { state -> CheckedContinuation<Lease, any Error>? in
            guard let continuation = state.waiters[waiter]?.continuation else {
                state.waiters[waiter]?.outcome = outcome
                return nil
            }
            state.waiters[waiter] = nil
            return continuation
        }
        continuation?.resume(with: outcome)
    }

    /// Makes connection `id`, then tells the machine how it went; a made connection is watched
    /// (its close, and an HTTP/2 one's streams and frames) from then on.
    private func open(_ id: ConnectionID, to origin: Origin, timings: HopTimings.Recorder?) {
        opener(origin, timings).whenComplete { result in
            switch result {
            case .success(let connection):
                let speaks: PoolStateMachine.Speaks
                switch connection {
                case .http1: speaks = .http1
                case .http2(let shared):
                    let most = shared.listen { [weak self] event in self?.http2Event(event, on: id) }
                    speaks = .http2(maximumStreams: most)
                }
                self.run(
                    self.state.withLockedValue { state in
                        // Kept before the machine can lend it.
                        state.connections[id] = connection
                        return state.machine.connected(id, speaks: speaks, now: .now(), on: ObjectIdentifier(connection.channel.eventLoop))
                    })
                connection.channel.closeFuture.whenComplete { _ in
                    self.run(
                        self.state.withLockedValue { state in
                            defer { state.connections[id] = nil }
                            return state.machine.closed(id, now: .now())
                        })
                }
            case .failure(let error):
                self.event { $0.connectFailed(id, error: error, now: .now(), jitter: Double.random(in: 0...1)) }
            }
        }
    }

    private func http2Event(_ event: HTTP2Connection.Event, on id: ConnectionID) {
        switch event {
        case .maximumStreams(let most): self.event { $0.settingsReceived(id, maximumStreams: most, now: .now()) }
        case .goAway: self.event { $0.goAwayReceived(id, now: .now()) }
        case .streamClosed: self.event { $0.streamClosed(id, now: .now()) }
        }
    }

    /// The error a hop is given for `failure`.
    private static func error(for failure: PoolStateMachine.Failure) -> any Error {
        switch failure {
        case .shutDown: NIOTransportError.shutDown
        case .cancelled: CancellationError()
        case .connectFailed(let error): error
        case .backingOff(let error, let wait): NIOTransportError.backingOff(error, retryIn: wait)
        }
    }
}
