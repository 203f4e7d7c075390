import NIOCore

/// Every decision of the connection pool, made in a value: an event in (a hop asks for a
/// connection, a connection is made or fails, a hop is done with one, one closes, a timer fires,
/// a server sends `GOAWAY` or new settings), the actions that follow out (lend, share, open,
/// fail, close, schedule). ``ConnectionPool`` carries them out; this type opens no socket and
/// reads no clock (the time comes with each event), so every transition is tested without one.
///
/// The rules, per origin:
/// - **Limits.** At most ``Configuration/connectionsPerOrigin`` connections are open or opening
///   at once. HTTP/1.1 lends a connection to one hop at a time; HTTP/2 shares one as streams, up
///   to the server's `SETTINGS_MAX_CONCURRENT_STREAMS` (100 until it says), and opens another
///   (within the limit) when every one is full.
/// - **Order.** A hop that finds nothing free waits in line; the line is served first come,
///   first served, as connections and streams free up. A waiter can leave at any point: in line,
///   or while the connection opened for it is being made (which the pool then keeps).
/// - **Reuse.** The most recently used idle HTTP/1.1 connection is lent first (the least likely
///   to have been closed by the server). An idle connection closes after
///   ``Configuration/idleTimeout``; one past ``Configuration/maximumLifetime`` is lent no more
///   (an HTTP/1.1 one closes when its hop ends, an HTTP/2 one takes no new stream and closes when
///   its streams end).
/// - **Discovery.** The first connection to an `https` origin that may speak HTTP/2 is waited
///   for by the hops after it, so a burst of first calls opens one connection, not the limit.
/// - **Failures.** A connection that cannot be made fails the hop it was opened for, and every
///   waiter nothing else can serve, and starts a backoff (``ConnectionBackoff``): until it ends,
///   a hop that finds no connection to use fails at once with that failure.
/// - **Draining.** A `GOAWAY` stops new streams on its connection; streams under way finish
///   (those the server left out are reset by SwiftNIO, and their hops may be sent again on
///   another connection: see `NIOErrors.streamClosed(_:duringBody:)`).
/// - **Shutdown.** Nothing new starts: waiters fail, idle connections close, busy ones close
///   when their hops or streams end; ``Action/shutDown`` says when the last one is gone.
struct PoolStateMachine {
    /// What the pool is allowed.
    struct Configuration: Sendable {
        var connectionsPerOrigin: Int
        var idleTimeout: TimeAmount
        var maximumLifetime: TimeAmount?
        /// Whether an origin may speak HTTP/2 (an `https` one offered it by ALPN, an h2c route).
        var mayShare: @Sendable (Origin) -> Bool
        var backoff: ConnectionBackoff
    }

    /// A connection, as the pool names it.
    typealias ConnectionID = Int
    /// A hop asking for a connection, as the pool names it.
    typealias WaiterID = Int

    /// What a connection speaks, once made.
    enum Speaks: Equatable, Sendable {
        case http1
        /// HTTP/2, with the most streams its server allows, when its settings came already.
        case http2(maximumStreams: Int?)
    }

    /// Why a hop gets no connection.
    enum Failure: Sendable, CustomStringConvertible {
        case shutDown
        case cancelled
        /// The connection opened for this hop (or for the hop before it) could not be made.
        case connectFailed(any Error)
        /// The origin backs off after failures: no attempt was made.
        case backingOff(any Error, retryIn: TimeAmount)

        var description: String {
            switch self {
            case .shutDown: "shut down"
            case .cancelled: "cancelled"
            case .connectFailed(let error): "connect failed (\(error))"
            case .backingOff(let error, let wait): "backing off \(wait.nanoseconds / 1_000_000) ms (\(error))"
            }
        }
    }

    /// What the pool must do.
    enum Action: Sendable, CustomStringConvertible {
        /// Lend an HTTP/1.1 connection to a hop; `isNew`: made for it.
        case lend(WaiterID, ConnectionID, isNew: Bool)
        /// Open a stream for a hop on an HTTP/2 connection; `isNew`: the connection was made for it.
        case share(WaiterID, ConnectionID, isNew: Bool)
        /// Make a connection to an origin, timed as part of the hop it is made for.
        case open(ConnectionID, Origin, for: WaiterID)
        /// The hop gets no connection.
        case fail(WaiterID, Failure)
        /// Close a connection (its ``PoolStateMachine/closed(_:now:)`` follows).
        case close(ConnectionID)
        /// Call ``PoolStateMachine/timerFired(_:_:now:)`` for this connection at `deadline`.
        case schedule(ConnectionID, Timer, at: NIODeadline)
        /// The pool is shut down and its last connection is closed.
        case shutDown

        var description: String {
            switch self {
            case .lend(let waiter, let connection, let isNew): "lend c\(connection) to w\(waiter)\(isNew ? " (new)" : "")"
            case .share(let waiter, let connection, let isNew): "share c\(connection) with w\(waiter)\(isNew ? " (new)" : "")"
            case .open(let connection, let origin, let waiter): "open c\(connection) to \(origin.host):\(origin.port) for w\(waiter)"
            case .fail(let waiter, let failure): "fail w\(waiter): \(failure)"
            case .close(let connection): "close c\(connection)"
            case .schedule(let connection, let timer, let deadline): "at \(deadline.uptimeNanoseconds / 1_000_000) ms: \(timer) c\(connection)"
            case .shutDown: "shut down"
            }
        }
    }

    /// A timer the pool asks for.
    enum Timer: Hashable, Sendable, CustomStringConvertible {
        /// An idle connection closes if it has been idle for the idle timeout (one timer per
        /// connection at most: one that finds the connection used since is set again for when
        /// it will have been idle that long).
        case idle
        /// A connection reaches its maximum lifetime.
        case lifetime

        var description: String {
            switch self {
            case .idle: "idle timeout of"
            case .lifetime: "lifetime end of"
            }
        }
    }

    /// What one connection is doing.
    private enum Use: Equatable {
        /// Being made; for the hop that asked, until it leaves.
        case opening(for: WaiterID?)
        /// HTTP/1.1, lent to a hop.
        case lent
        /// HTTP/1.1, idle.
        case idle
        /// HTTP/2, with its streams open and the most the server allows.
        case shared(streams: Int, most: Int)
        /// Closing: its close is awaited.
        case closing
    }

    private struct Connection {
        let origin: Origin
        var use: Use
        /// Past its lifetime, or a `GOAWAY` came: lent or shared no more.
        var draining = false
        /// Since when it has been idle (`nil` while in use).
        var idleSince: NIODeadline?
        /// Its idle timer is set.
        var idleTimerSet = false
        /// The event loop it runs on, once made.
        var loop: LoopID?
    }

    /// Which event loop a connection runs on (the loop's identity): a hop whose task runs on a
    /// loop is lent an idle connection on it first (``EventLoopTaskExecutor``).
    typealias LoopID = ObjectIdentifier

    private struct Line {
        /// Hops waiting, first come first.
        var waiters: [WaiterID] = []
        /// Idle HTTP/1.1 connections, the most recently used last.
        var idle: [ConnectionID] = []
        /// HTTP/2 connections, oldest first.
        var shared: [ConnectionID] = []
        /// Connections open, opening or closing (what the limit counts).
        var count = 0
        /// A connection made here told which protocol the origin speaks.
        var protocolKnown = false
        /// The first connection to an origin that may speak HTTP/2 is being made.
        var probing = false
        /// Failures to connect in a row, when the last ended backing off, and why.
        var failures = 0
        var backoffEnds: NIODeadline?
        var lastFailure: (any Error)?

        var isEmpty: Bool { count == 0 && waiters.isEmpty }
    }

    let configuration: Configuration
    private var lines: [Origin: Line] = [:]
    private var connections: [ConnectionID: Connection] = [:]
    /// Every hop that asked and has neither been served nor failed: the origin it asked for.
    private var waiting: [WaiterID: Origin] = [:]
    private var nextConnection = 0
    private(set) var isShutDown = false

    init(configuration: Configuration) {
        var configuration = configuration
        configuration.connectionsPerOrigin = max(1, configuration.connectionsPerOrigin)
        self.configuration = configuration
    }

    /// The most streams an HTTP/2 connection is given before its server says.
    static let defaultStreams = 100

    // MARK: Events

    /// A hop asks for a connection to `origin`. No action: it waits in line.
    /// `loop`: the event loop the hop runs on, if any; an idle connection on it is lent first.
    mutating func lease(_ waiter: WaiterID, to origin: Origin, now: NIODeadline, preferring loop: LoopID? = nil) -> [Action] {
        guard !isShutDown else { return [.fail(waiter, .shutDown)] }
        // The common case, with the origin looked up once: nobody in line before this hop, and a
        // shared connection with room or an idle one to give it at once (as `serve` would).
        if let line = lines.index(forKey: origin) {
            guard lines.values[line].waiters.isEmpty else {
                // Behind other hops in line: every event since they were left waiting served
                // what it could, so nothing can serve this one before them.
                waiting[waiter] = origin
                lines.values[line].waiters.append(waiter)
                return []
            }
            if let id = lines.values[line].shared.first(where: { hasRoom($0) }),
                let slot = connections.index(forKey: id), case .shared(let streams, let most) = connections.values[slot].use
            {
                connections.values[slot].use = .shared(streams: streams + 1, most: most)
                connections.values[slot].idleSince = nil
                return [.share(waiter, id, isNew: false)]
            }
            if let id = Self.takeIdle(from: &lines.values[line].idle, preferring: loop, in: connections) {
                if let slot = connections.index(forKey: id) {
                    connections.values[slot].use = .lent
                    connections.values[slot].idleSince = nil
                }
                return [.lend(waiter, id, isNew: false)]
            }
        }
        waiting[waiter] = origin
        lines[origin, default: Line()].waiters.append(waiter)
        return serve(origin, now: now)
    }

    /// The hop left (its task was cancelled): out of the line, or no longer waiting for the
    /// connection being made for it (the pool keeps that one).
    mutating func cancel(_ waiter: WaiterID) -> [Action] {
        guard let origin = waiting.removeValue(forKey: waiter) else { return [] }
        lines[origin]?.waiters.removeAll { $0 == waiter }
        for (id, connection) in connections where connection.use == .opening(for: waiter) {
            connections[id]?.use = .opening(for: nil)
        }
        return [.fail(waiter, .cancelled)]
    }

    /// A connection was made, speaking `speaks`.
    /// `loop`: the event loop it runs on.
    mutating func connected(_ id: ConnectionID, speaks: Speaks, now: NIODeadline, on loop: LoopID? = nil) -> [Action] {
        guard let connection = connections[id], case .opening(let opener) = connection.use else { return [] }
        connections[id]?.loop = loop
        let origin = connection.origin
        var actions: [Action] = []
        lines[origin]?.protocolKnown = true
        lines[origin]?.probing = false
        lines[origin]?.failures = 0
        lines[origin]?.backoffEnds = nil
        lines[origin]?.lastFailure = nil
        guard !isShutDown else {
            connections[id]?.use = .closing
            return [.close(id)]
        }
        if let lifetime = configuration.maximumLifetime { actions.append(.schedule(id, .lifetime, at: now + lifetime)) }
        let served = opener.flatMap { waiting[$0] != nil ? $0 : nil }
        if let served {
            waiting[served] = nil
            lines[origin]?.waiters.removeAll { $0 == served }
        }
        switch speaks {
        case .http1:
            if let served {
                connections[id]?.use = .lent
                actions.append(.lend(served, id, isNew: true))
            } else {
                actions += makeIdle(id, now: now)
            }
        case .http2(let most):
            connections[id]?.use = .shared(streams: served == nil ? 0 : 1, most: max(0, most ?? Self.defaultStreams))
            lines[origin]?.shared.append(id)
            if let served { actions.append(.share(served, id, isNew: true)) }
        }
        actions += serve(origin, now: now)
        if case .shared(0, _) = connections[id]?.use { actions += makeIdle(id, now: now) }
        return actions
    }

    /// A connection could not be made. `jitter` (0 to 1) places the backoff's delay.
    mutating func connectFailed(_ id: ConnectionID, error: any Error, now: NIODeadline, jitter: Double) -> [Action] {
        guard let connection = connections.removeValue(forKey: id), case .opening(let opener) = connection.use else { return [] }
        let origin = connection.origin
        var actions: [Action] = []
        if var line = lines[origin] {
            line.count -= 1
            line.probing = false
            line.failures += 1
            line.lastFailure = error
            let delay = configuration.backoff.delay(afterFailures: line.failures, jitter: jitter)
            line.backoffEnds = delay > .zero ? now + delay : nil
            lines[origin] = line
        }
        if let opener, waiting.removeValue(forKey: opener) != nil {
            lines[origin]?.waiters.removeAll { $0 == opener }
            actions.append(.fail(opener, .connectFailed(error)))
        }
        // Waiters nothing else can serve (no connection left that may free up) fail with it.
        if let line = lines[origin], line.count == 0 {
            for waiter in line.waiters {
                waiting[waiter] = nil
                actions.append(.fail(waiter, .connectFailed(error)))
            }
            lines[origin]?.waiters = []
        }
        actions += serve(origin, now: now)
        forgetIfEmpty(origin)
        if isShutDown && connections.isEmpty { actions.append(.shutDown) }
        return actions
    }

    /// A hop is done with its HTTP/1.1 connection, which may carry another (`reusable`) or not.
    mutating func released(_ id: ConnectionID, reusable: Bool, now: NIODeadline) -> [Action] {
        guard let connection = connections[id], connection.use == .lent else { return [] }
        guard reusable, !connection.draining, !isShutDown else {
            connections[id]?.use = .closing
            return [.close(id)]
        }
        guard let line = lines.index(forKey: connection.origin) else { return makeIdle(id, now: now) }
        // Straight to the first hop in line, if any (it waited for a place, not for a new
        // connection: this origin speaks HTTP/1.1).
        if let waiter = lines.values[line].waiters.first {
            lines.values[line].waiters.removeFirst()
            waiting[waiter] = nil
            return [.lend(waiter, id, isNew: false)]
        }
        // Idle (`makeIdle`, with the origin and the connection looked up once).
        lines.values[line].idle.append(id)
        guard let slot = connections.index(forKey: id) else { return [] }
        connections.values[slot].use = .idle
        connections.values[slot].idleSince = now
        guard !connections.values[slot].idleTimerSet else { return [] }
        connections.values[slot].idleTimerSet = true
        return [.schedule(id, .idle, at: now + configuration.idleTimeout)]
    }

    /// A stream on an HTTP/2 connection ended.
    mutating func streamClosed(_ id: ConnectionID, now: NIODeadline) -> [Action] {
        guard let connection = connections[id], case .shared(let streams, let most) = connection.use else { return [] }
        connections[id]?.use = .shared(streams: max(0, streams - 1), most: most)
        var actions = serve(connection.origin, now: now)
        if case .shared(0, _) = connections[id]?.use { actions += makeIdle(id, now: now) }
        return actions
    }

    /// The server of an HTTP/2 connection allows `most` streams at once.
    mutating func settingsReceived(_ id: ConnectionID, maximumStreams most: Int, now: NIODeadline) -> [Action] {
        guard let connection = connections[id], case .shared(let streams, _) = connection.use else { return [] }
        connections[id]?.use = .shared(streams: streams, most: max(0, most))
        return serve(connection.origin, now: now)
    }

    /// The server sent `GOAWAY`: no new stream on this connection.
    mutating func goAwayReceived(_ id: ConnectionID, now: NIODeadline) -> [Action] {
        drain(id, now: now)
    }

    /// A timer asked for fired.
    mutating func timerFired(_ id: ConnectionID, _ timer: Timer, now: NIODeadline) -> [Action] {
        guard let connection = connections[id] else { return [] }
        switch timer {
        case .idle:
            connections[id]?.idleTimerSet = false
            switch connection.use {
            case .idle, .shared(0, _): break
            default: return []
            }
            guard let since = connection.idleSince else { return [] }
            let due = since + configuration.idleTimeout
            guard now >= due else {
                // Used since the timer was set, and idle again: set for its new idle spell.
                connections[id]?.idleTimerSet = true
                return [.schedule(id, .idle, at: due)]
            }
            return close(id)
        case .lifetime:
            return drain(id, now: now)
        }
    }

    /// A connection closed (whatever closed it).
    mutating func closed(_ id: ConnectionID, now: NIODeadline) -> [Action] {
        guard let connection = connections.removeValue(forKey: id) else { return [] }
        let origin = connection.origin
        if case .opening = connection.use {
            // Reported as a failure to connect instead; nothing to count twice.
            connections[id] = connection
            return []
        }
        lines[origin]?.count -= 1
        lines[origin]?.idle.removeAll { $0 == id }
        lines[origin]?.shared.removeAll { $0 == id }
        var actions = serve(origin, now: now)
        forgetIfEmpty(origin)
        if isShutDown && connections.isEmpty { actions.append(.shutDown) }
        return actions
    }

    /// Nothing new starts: every waiter fails, idle connections close now, busy ones when their
    /// hops and streams end.
    mutating func shutdown() -> [Action] {
        guard !isShutDown else { return [] }
        isShutDown = true
        // Every hop in a line, and every hop a connection is being made for.
        var actions: [Action] = waiting.keys.sorted().map { .fail($0, .shutDown) }
        waiting = [:]
        for origin in lines.keys { lines[origin]?.waiters = [] }
        for (id, connection) in connections.sorted(by: { $0.key < $1.key }) {
            switch connection.use {
            case .idle, .shared(0, _): actions += close(id)
            case .shared: connections[id]?.draining = true
            case .opening: connections[id]?.use = .opening(for: nil)
            case .lent, .closing: break
            }
        }
        if connections.isEmpty { actions.append(.shutDown) }
        return actions
    }

    // MARK: Decisions

    /// The idle connection to lend from `idle`: the most recently used one on `loop`, if there
    /// is one, else the most recently used.
    private static func takeIdle(
        from idle: inout [ConnectionID], preferring loop: LoopID?, in connections: [ConnectionID: Connection]
    ) -> ConnectionID? {
        if let loop, idle.count > 1, connections[idle[idle.count - 1]]?.loop != loop,
            let index = idle.lastIndex(where: { connections[$0]?.loop == loop })
        {
            return idle.remove(at: index)
        }
        return idle.popLast()
    }

    /// Serves the origin's line from the front for as long as something can serve it. (The
    /// line is read field by field, never copied whole: a copy alive while its arrays change
    /// would make each change copy them.)
    private mutating func serve(_ origin: Origin, now: NIODeadline) -> [Action] {
        var actions: [Action] = []
        while let waiter = lines[origin]?.waiters.first {
            if let id = lines[origin]?.shared.first(where: { hasRoom($0) }), case .shared(let streams, let most) = connections[id]?.use {
                connections[id]?.use = .shared(streams: streams + 1, most: most)
                connections[id]?.idleSince = nil
                actions.append(.share(waiter, id, isNew: false))
            } else if let id = lines[origin]?.idle.popLast() {
                connections[id]?.use = .lent
                connections[id]?.idleSince = nil
                actions.append(.lend(waiter, id, isNew: false))
            } else if lines[origin]?.probing == true {
                return actions
            } else if let ends = lines[origin]?.backoffEnds, now < ends {
                // Nothing to lend, and the origin backs off: only a connection that frees up can serve.
                guard lines[origin]?.count == 0 else { return actions }
                let failure = Failure.backingOff(lines[origin]?.lastFailure ?? PoolBackingOff(), retryIn: ends - now)
                for waiter in lines[origin]?.waiters ?? [] {
                    waiting[waiter] = nil
                    actions.append(.fail(waiter, failure))
                }
                lines[origin]?.waiters = []
                forgetIfEmpty(origin)
                return actions
            } else if let count = lines[origin]?.count, count < configuration.connectionsPerOrigin {
                let id = nextConnection
                nextConnection += 1
                connections[id] = Connection(origin: origin, use: .opening(for: waiter))
                lines[origin]?.count += 1
                if lines[origin]?.protocolKnown == false && configuration.mayShare(origin) { lines[origin]?.probing = true }
                // The opener stays in `waiting` (it may leave while its connection is made).
                lines[origin]?.waiters.removeFirst()
                actions.append(.open(id, origin, for: waiter))
                continue
            } else {
                return actions
            }
            waiting[waiter] = nil
            lines[origin]?.waiters.removeFirst()
        }
        return actions
    }

    /// Whether an HTTP/2 connection takes another stream.
    private func hasRoom(_ id: ConnectionID) -> Bool {
        guard let connection = connections[id], !connection.draining, case .shared(let streams, let most) = connection.use else {
            return false
        }
        return streams < most
    }

    /// `id` is idle from now (an HTTP/1.1 connection back in the line, an HTTP/2 one without
    /// streams): its idle timer is set, unless one is set already (it finds the new spell when
    /// it fires).
    private mutating func makeIdle(_ id: ConnectionID, now: NIODeadline) -> [Action] {
        guard let connection = connections[id] else { return [] }
        switch connection.use {
        case .shared:
            if connection.draining { return close(id) }
        default:
            connections[id]?.use = .idle
            lines[connection.origin]?.idle.append(id)
        }
        connections[id]?.idleSince = now
        guard !connection.idleTimerSet else { return [] }
        connections[id]?.idleTimerSet = true
        return [.schedule(id, .idle, at: now + configuration.idleTimeout)]
    }

    /// `id` takes no new hop: closed now when idle, when its hop or last stream ends otherwise.
    private mutating func drain(_ id: ConnectionID, now: NIODeadline) -> [Action] {
        guard let connection = connections[id] else { return [] }
        connections[id]?.draining = true
        switch connection.use {
        case .idle, .shared(0, _): return close(id) + serve(connection.origin, now: now)
        default: return serve(connection.origin, now: now)
        }
    }

    private mutating func close(_ id: ConnectionID) -> [Action] {
        guard let connection = connections[id] else { return [] }
        lines[connection.origin]?.idle.removeAll { $0 == id }
        lines[connection.origin]?.shared.removeAll { $0 == id }
        connections[id]?.use = .closing
        return [.close(id)]
    }


    private mutating func forgetIfEmpty(_ origin: Origin) {
        guard let line = lines[origin], line.isEmpty, line.backoffEnds == nil else { return }
        lines[origin] = nil
    }

    // MARK: Reading

    /// How many connections are open (lent, idle, shared or being made) to `origin`, how many
    /// of them speak HTTP/2, and how many hops wait.
    func counts(_ origin: Origin) -> (open: Int, http2: Int, waiting: Int) {
        let line = lines[origin]
        return (line?.count ?? 0, line?.shared.count ?? 0, line?.waiters.count ?? 0)
    }
}

/// The failure a backoff reports when it has none of its own (never expected: a backoff starts
/// with a failure).
struct PoolBackingOff: Error, CustomStringConvertible {
    var description: String { "the origin's last connection failed" }
}
