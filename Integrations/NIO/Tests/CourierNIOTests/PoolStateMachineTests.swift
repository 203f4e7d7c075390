@testable import CourierNIO
import NIOCore
import Testing

/// Every decision of the pool, without a socket: events in, actions out (as the words
/// `PoolStateMachine.Action` prints). Times are milliseconds since an arbitrary start.
@Suite("NIOExecutor: the pool's decisions")
struct PoolStateMachineTests {
    static let plain = Origin(isSecure: false, host: "a.test", port: 80)
    static let secure = Origin(isSecure: true, host: "b.test", port: 443)

    static func machine(
        limit: Int = 2, idle: TimeAmount = .seconds(60), lifetime: TimeAmount? = nil, mayShare: Bool = false,
        backoff: ConnectionBackoff = ConnectionBackoff()
    ) -> PoolStateMachine {
        PoolStateMachine(
            configuration: .init(
                connectionsPerOrigin: limit, idleTimeout: idle, maximumLifetime: lifetime, mayShare: { mayShare && $0.isSecure }, backoff: backoff))
    }

    static func at(_ milliseconds: Int64) -> NIODeadline { .uptimeNanoseconds(UInt64(milliseconds) * 1_000_000) }

    struct Refused: Error, CustomStringConvertible { var description: String { "refused" } }

    @Test func theFirstHopOpensAConnectionAndIsLentIt() {
        var pool = Self.machine()
        #expect(pool.lease(0, to: Self.plain, now: Self.at(0)).map(\.description) == ["open c0 to a.test:80 for w0"])
        #expect(pool.connected(0, speaks: .http1, now: Self.at(5)).map(\.description) == ["lend c0 to w0 (new)"])
        #expect(pool.released(0, reusable: true, now: Self.at(9)).map(\.description) == ["at 60009 ms: idle timeout of c0"])
        #expect(pool.lease(1, to: Self.plain, now: Self.at(10)).map(\.description) == ["lend c0 to w1"])
    }

    @Test func theLimitHoldsAndTheLineIsServedFirstComeFirstServed() {
        var pool = Self.machine(limit: 2)
        var actions: [String] = []
        for waiter in 0..<5 { actions += pool.lease(waiter, to: Self.plain, now: Self.at(0)).map(\.description) }
        #expect(actions == ["open c0 to a.test:80 for w0", "open c1 to a.test:80 for w1"])
        #expect(pool.counts(Self.plain) == (2, 0, 3))
        // The second connection is made first: it serves the hop it was opened for.
        #expect(pool.connected(1, speaks: .http1, now: Self.at(1)).map(\.description) == ["lend c1 to w1 (new)"])
        #expect(pool.connected(0, speaks: .http1, now: Self.at(2)).map(\.description) == ["lend c0 to w0 (new)"])
        #expect(pool.released(1, reusable: true, now: Self.at(3)).map(\.description) == ["lend c1 to w2"], "straight to the next in line")
        #expect(pool.released(0, reusable: true, now: Self.at(4)).map(\.description) == ["lend c0 to w3"])
        #expect(pool.released(0, reusable: false, now: Self.at(5)).map(\.description) == ["close c0"])
        // Its close frees its place: the next in line gets a new connection.
        #expect(pool.closed(0, now: Self.at(6)).map(\.description) == ["open c2 to a.test:80 for w4"])
        #expect(pool.counts(Self.plain) == (2, 0, 0))
    }

    @Test func theMostRecentlyUsedIdleConnectionIsLentFirst() {
        var pool = Self.machine(limit: 2)
        _ = pool.lease(0, to: Self.plain, now: Self.at(0))
        _ = pool.lease(1, to: Self.plain, now: Self.at(0))
        _ = pool.connected(0, speaks: .http1, now: Self.at(1))
        _ = pool.connected(1, speaks: .http1, now: Self.at(1))
        _ = pool.released(1, reusable: true, now: Self.at(2))
        _ = pool.released(0, reusable: true, now: Self.at(3))
        #expect(pool.lease(2, to: Self.plain, now: Self.at(4)).map(\.description) == ["lend c0 to w2"])
        #expect(pool.lease(3, to: Self.plain, now: Self.at(4)).map(\.description) == ["lend c1 to w3"])
    }

    /// Stand-ins for two event loops: only their identities matter to the machine.
    final class Loop {}

    @Test func aHopOnAnEventLoopIsLentAnIdleConnectionOnItFirst() {
        let (first, second) = (Loop(), Loop())
        var pool = Self.machine(limit: 3)
        for waiter in 0..<3 { _ = pool.lease(waiter, to: Self.plain, now: Self.at(0)) }
        _ = pool.connected(0, speaks: .http1, now: Self.at(1), on: ObjectIdentifier(first))
        _ = pool.connected(1, speaks: .http1, now: Self.at(1), on: ObjectIdentifier(second))
        _ = pool.connected(2, speaks: .http1, now: Self.at(1), on: ObjectIdentifier(first))
        for id in [0, 2, 1] { _ = pool.released(id, reusable: true, now: Self.at(2)) }
        // c1 (the second loop) is the most recently used; a hop on the first loop passes it over
        // for the most recently used of the first loop's, c2.
        #expect(pool.lease(3, to: Self.plain, now: Self.at(3), preferring: ObjectIdentifier(first)).map(\.description) == ["lend c2 to w3"])
        #expect(pool.lease(4, to: Self.plain, now: Self.at(3), preferring: ObjectIdentifier(second)).map(\.description) == ["lend c1 to w4"])
        // None left on the second loop: the most recently used of any.
        #expect(pool.lease(5, to: Self.plain, now: Self.at(3), preferring: ObjectIdentifier(second)).map(\.description) == ["lend c0 to w5"])
        // All three lent, at the limit: the next waits in line, whatever its loop.
        #expect(pool.lease(6, to: Self.plain, now: Self.at(3), preferring: ObjectIdentifier(first)).isEmpty)
    }

    @Test func aWaiterCancelledInLineLeavesItAndTheRestKeepTheirOrder() {
        var pool = Self.machine(limit: 1)
        _ = pool.lease(0, to: Self.plain, now: Self.at(0))
        _ = pool.connected(0, speaks: .http1, now: Self.at(1))
        for waiter in 1...3 { #expect(pool.lease(waiter, to: Self.plain, now: Self.at(2)).isEmpty) }
        #expect(pool.cancel(2).map(\.description) == ["fail w2: cancelled"])
        #expect(pool.cancel(2).isEmpty, "a second cancel does nothing")
        #expect(pool.counts(Self.plain) == (1, 0, 2))
        #expect(pool.released(0, reusable: true, now: Self.at(3)).map(\.description).last == "lend c0 to w1")
        #expect(pool.released(0, reusable: true, now: Self.at(4)).map(\.description).last == "lend c0 to w3")
        #expect(pool.cancel(3).isEmpty, "a waiter already served is not failed")
    }

    @Test func aWaiterCancelledWhileItsConnectionIsMadeLeavesTheConnectionToThePool() {
        var pool = Self.machine(limit: 1)
        _ = pool.lease(0, to: Self.plain, now: Self.at(0))
        #expect(pool.cancel(0).map(\.description) == ["fail w0: cancelled"])
        #expect(pool.connected(0, speaks: .http1, now: Self.at(5)).map(\.description) == ["at 60005 ms: idle timeout of c0"])
        #expect(pool.lease(1, to: Self.plain, now: Self.at(6)).map(\.description) == ["lend c0 to w1"])
    }

    /// One idle timer per connection at most: a connection used and idle again while its timer
    /// is set keeps that timer, which, finding it idle for less than the timeout, is set again for
    /// when it will have been.
    @Test func anIdleConnectionClosesOnceIdleForTheTimeoutWithOneTimerAtMost() {
        var pool = Self.machine(limit: 1, idle: .milliseconds(100))
        _ = pool.lease(0, to: Self.plain, now: Self.at(0))
        _ = pool.connected(0, speaks: .http1, now: Self.at(0))
        #expect(pool.released(0, reusable: true, now: Self.at(10)).map(\.description) == ["at 110 ms: idle timeout of c0"])
        _ = pool.lease(1, to: Self.plain, now: Self.at(50))
        #expect(pool.released(0, reusable: true, now: Self.at(90)).isEmpty, "its timer is still set")
        #expect(pool.timerFired(0, .idle, now: Self.at(110)).map(\.description) == ["at 190 ms: idle timeout of c0"])
        #expect(pool.timerFired(0, .idle, now: Self.at(190)).map(\.description) == ["close c0"])
        #expect(pool.lease(2, to: Self.plain, now: Self.at(191)).isEmpty, "a closing connection is not lent; its place is free once closed")
        #expect(pool.closed(0, now: Self.at(192)).map(\.description) == ["open c1 to a.test:80 for w2"])
    }

    @Test func aConnectionThatDiesWhileIdleFreesItsPlace() {
        var pool = Self.machine(limit: 1)
        _ = pool.lease(0, to: Self.plain, now: Self.at(0))
        _ = pool.connected(0, speaks: .http1, now: Self.at(0))
        _ = pool.released(0, reusable: true, now: Self.at(1))
        #expect(pool.closed(0, now: Self.at(2)).isEmpty)
        #expect(pool.counts(Self.plain) == (0, 0, 0))
        #expect(pool.lease(1, to: Self.plain, now: Self.at(3)).map(\.description) == ["open c1 to a.test:80 for w1"])
        // Its idle timer, when it fires, finds nothing.
        #expect(pool.timerFired(0, .idle, now: Self.at(60_001)).isEmpty)
    }

    @Test func aConnectionPastItsLifetimeIsLentNoMore() {
        var pool = Self.machine(limit: 1, lifetime: .seconds(30))
        _ = pool.lease(0, to: Self.plain, now: Self.at(0))
        #expect(pool.connected(0, speaks: .http1, now: Self.at(0)).map(\.description) == ["at 30000 ms: lifetime end of c0", "lend c0 to w0 (new)"])
        #expect(pool.timerFired(0, .lifetime, now: Self.at(30_000)).isEmpty, "lent: it finishes its hop")
        #expect(pool.lease(1, to: Self.plain, now: Self.at(30_001)).isEmpty)
        #expect(pool.released(0, reusable: true, now: Self.at(30_002)).map(\.description) == ["close c0"])
        #expect(pool.closed(0, now: Self.at(30_003)).map(\.description) == ["open c1 to a.test:80 for w1"])
        // Idle when its lifetime ends: closed at once.
        _ = pool.connected(1, speaks: .http1, now: Self.at(30_004))
        _ = pool.released(1, reusable: true, now: Self.at(30_005))
        #expect(pool.timerFired(1, .lifetime, now: Self.at(60_004)).map(\.description) == ["close c1"])
    }

    @Test func aFailedConnectionFailsItsHopAndTheOriginBacksOff() {
        var pool = Self.machine(limit: 4, backoff: ConnectionBackoff(initial: .milliseconds(100), maximum: .seconds(1)))
        _ = pool.lease(0, to: Self.plain, now: Self.at(0))
        #expect(pool.connectFailed(0, error: Refused(), now: Self.at(10), jitter: 1).map(\.description) == ["fail w0: connect failed (refused)"])
        // Within the backoff: no attempt, the failure at once.
        #expect(pool.lease(1, to: Self.plain, now: Self.at(60)).map(\.description) == ["fail w1: backing off 50 ms (refused)"])
        // After it: one attempt; failing again doubles the delay.
        #expect(pool.lease(2, to: Self.plain, now: Self.at(110)).map(\.description) == ["open c1 to a.test:80 for w2"])
        #expect(pool.lease(3, to: Self.plain, now: Self.at(111)).map(\.description) == ["open c2 to a.test:80 for w3"])
        _ = pool.connectFailed(1, error: Refused(), now: Self.at(120), jitter: 1)
        // The other attempt is still under way: a new hop waits for it rather than failing.
        #expect(pool.lease(4, to: Self.plain, now: Self.at(130)).isEmpty)
        #expect(pool.connectFailed(2, error: Refused(), now: Self.at(140), jitter: 0).map(\.description) == [
            "fail w3: connect failed (refused)", "fail w4: connect failed (refused)",
        ])
        // Three failures in a row, jitter 0: half of 400 ms.
        #expect(pool.lease(5, to: Self.plain, now: Self.at(339)).map(\.description) == ["fail w5: backing off 1 ms (refused)"])
        #expect(pool.lease(6, to: Self.plain, now: Self.at(340)).map(\.description) == ["open c3 to a.test:80 for w6"])
        // A connection made resets the count.
        _ = pool.connected(3, speaks: .http1, now: Self.at(341))
        _ = pool.released(3, reusable: false, now: Self.at(342))
        _ = pool.closed(3, now: Self.at(343))
        _ = pool.lease(7, to: Self.plain, now: Self.at(344))
        #expect(pool.connectFailed(4, error: Refused(), now: Self.at(350), jitter: 1).count == 1)
        #expect(pool.lease(8, to: Self.plain, now: Self.at(449)).map(\.description) == ["fail w8: backing off 1 ms (refused)"])
    }

    @Test func waitersBehindBusyConnectionsWaitOutAFailure() {
        var pool = Self.machine(limit: 2)
        _ = pool.lease(0, to: Self.plain, now: Self.at(0))
        _ = pool.connected(0, speaks: .http1, now: Self.at(1))
        #expect(pool.lease(1, to: Self.plain, now: Self.at(2)).map(\.description) == ["open c1 to a.test:80 for w1"])
        #expect(pool.lease(2, to: Self.plain, now: Self.at(2)).isEmpty)
        #expect(pool.connectFailed(1, error: Refused(), now: Self.at(3), jitter: 1).map(\.description) == ["fail w1: connect failed (refused)"])
        #expect(pool.released(0, reusable: true, now: Self.at(4)).map(\.description).last == "lend c0 to w2")
        // The busy connection dies during the backoff, with a hop in line: nothing can serve it.
        _ = pool.lease(3, to: Self.plain, now: Self.at(5))
        #expect(pool.closed(0, now: Self.at(6)).map(\.description) == ["fail w3: backing off 97 ms (refused)"])
    }

    @Test func http2HopsShareAConnectionUpToTheServersStreamLimit() {
        var pool = Self.machine(limit: 2, mayShare: true)
        #expect(pool.lease(0, to: Self.secure, now: Self.at(0)).map(\.description) == ["open c0 to b.test:443 for w0"])
        // The first connection may turn out to be HTTP/2: the hops after it wait for it.
        #expect(pool.lease(1, to: Self.secure, now: Self.at(1)).isEmpty)
        #expect(pool.lease(2, to: Self.secure, now: Self.at(1)).isEmpty)
        #expect(pool.lease(3, to: Self.secure, now: Self.at(1)).isEmpty)
        #expect(
            pool.connected(0, speaks: .http2(maximumStreams: 2), now: Self.at(2)).map(\.description) == [
                "share c0 with w0 (new)", "share c0 with w1", "open c1 to b.test:443 for w2",
            ])
        #expect(pool.counts(Self.secure) == (2, 1, 1))
        // The server allows more: the waiter gets a stream.
        #expect(pool.settingsReceived(0, maximumStreams: 3, now: Self.at(3)).map(\.description) == ["share c0 with w3"])
        #expect(pool.streamClosed(0, now: Self.at(4)).isEmpty)
        #expect(pool.lease(4, to: Self.secure, now: Self.at(5)).map(\.description) == ["share c0 with w4"])
        for _ in 0..<2 { #expect(pool.streamClosed(0, now: Self.at(6)).isEmpty) }
        // Its last stream ended: the idle timer starts.
        #expect(pool.streamClosed(0, now: Self.at(7)).map(\.description) == ["at 60007 ms: idle timeout of c0"])
        // A stream while the timer is set: the timer finds the connection busy and does nothing.
        #expect(pool.lease(5, to: Self.secure, now: Self.at(100)).map(\.description) == ["share c0 with w5"])
        #expect(pool.timerFired(0, .idle, now: Self.at(60_007)).isEmpty)
        #expect(pool.streamClosed(0, now: Self.at(60_100)).map(\.description) == ["at 120100 ms: idle timeout of c0"])
        #expect(pool.timerFired(0, .idle, now: Self.at(120_100)).map(\.description) == ["close c0"])
    }

    @Test func aGoAwayStopsNewStreamsAndClosesTheConnectionOnceItsStreamsEnd() {
        var pool = Self.machine(limit: 2, mayShare: true)
        _ = pool.lease(0, to: Self.secure, now: Self.at(0))
        _ = pool.connected(0, speaks: .http2(maximumStreams: nil), now: Self.at(1))
        #expect(pool.goAwayReceived(0, now: Self.at(2)).isEmpty)
        #expect(pool.lease(1, to: Self.secure, now: Self.at(3)).map(\.description) == ["open c1 to b.test:443 for w1"])
        #expect(pool.streamClosed(0, now: Self.at(4)).map(\.description) == ["close c0"])
    }

    @Test func aFirstConnectionThatSpeaksHTTP1LetsTheWaitersOpenTheirOwn() {
        var pool = Self.machine(limit: 2, mayShare: true)
        _ = pool.lease(0, to: Self.secure, now: Self.at(0))
        _ = pool.lease(1, to: Self.secure, now: Self.at(0))
        _ = pool.lease(2, to: Self.secure, now: Self.at(0))
        #expect(
            pool.connected(0, speaks: .http1, now: Self.at(1)).map(\.description) == [
                "lend c0 to w0 (new)", "open c1 to b.test:443 for w1",
            ])
        #expect(pool.counts(Self.secure) == (2, 0, 1))
        // A failed first connection lets the waiters try for themselves (after the backoff).
        var other = Self.machine(limit: 2, mayShare: true, backoff: .none)
        _ = other.lease(0, to: Self.secure, now: Self.at(0))
        _ = other.lease(1, to: Self.secure, now: Self.at(0))
        #expect(
            other.connectFailed(0, error: Refused(), now: Self.at(1), jitter: 1).map(\.description) == [
                "fail w0: connect failed (refused)", "fail w1: connect failed (refused)",
            ])
        #expect(other.lease(2, to: Self.secure, now: Self.at(1)).map(\.description) == ["open c1 to b.test:443 for w2"])
    }

    @Test func shutdownStartsNothingNewAndEndsWhenTheLastConnectionCloses() {
        var pool = Self.machine(limit: 2, mayShare: true)
        _ = pool.lease(0, to: Self.plain, now: Self.at(0))
        _ = pool.lease(1, to: Self.plain, now: Self.at(0))
        _ = pool.lease(2, to: Self.plain, now: Self.at(0))
        _ = pool.connected(0, speaks: .http1, now: Self.at(1))
        _ = pool.lease(3, to: Self.secure, now: Self.at(1))
        _ = pool.connected(2, speaks: .http2(maximumStreams: nil), now: Self.at(2))
        // c0 lent to w0, c1 being made for w1 (w2 in line), c2 shared with w3.
        #expect(pool.shutdown().map(\.description) == ["fail w1: shut down", "fail w2: shut down"])
        #expect(pool.lease(4, to: Self.plain, now: Self.at(3)).map(\.description) == ["fail w4: shut down"])
        #expect(pool.connected(1, speaks: .http1, now: Self.at(4)).map(\.description) == ["close c1"])
        #expect(pool.released(0, reusable: true, now: Self.at(5)).map(\.description) == ["close c0"])
        #expect(pool.streamClosed(2, now: Self.at(6)).map(\.description) == ["close c2"])
        #expect(pool.closed(0, now: Self.at(7)).isEmpty)
        #expect(pool.closed(1, now: Self.at(7)).isEmpty)
        #expect(pool.closed(2, now: Self.at(8)).map(\.description) == ["shut down"])
    }

    @Test(arguments: [
        (1, 1.0, 100), (1, 0.0, 50), (2, 1.0, 200), (3, 0.5, 300), (6, 1.0, 3_200), (7, 1.0, 5_000), (1_000, 1.0, 5_000), (Int.max, 0.0, 2_500),
        (0, 1.0, 100), (2, Double.nan, 200), (2, -3, 100),
    ])
    func theBackoffDoublesUpToItsMaximumWithJitter(failures: Int, jitter: Double, milliseconds: Int64) {
        let delay = ConnectionBackoff().delay(afterFailures: failures, jitter: jitter)
        #expect(delay == .milliseconds(milliseconds))
        #expect(ConnectionBackoff.none.delay(afterFailures: failures, jitter: jitter) == .zero)
    }
}
