@_spi(Transports) import CourierCore
import NIOConcurrencyHelpers

/// The exchange's idle timer over one hop whose body is gathered under the rules
/// (``/Courier/GathersUnderRules``), from the hop's start (a wait for a connection included) to
/// its body's end: what the timer stops when the hop goes idle. While the hop waits in the pool's
/// line, that is the wait; once it has a connection, the call on it. The exchange reports the
/// timeout; this only stops the work, as a cancelled task would.
final class HopWatch: Sendable {
    private enum Target {
        case none
        case wait(@Sendable () -> Void)
        case call(HTTP1Call)
        case fired
    }

    private let target = NIOLockedValueBox(Target.none)

    /// Starts watching a hop held to `rules`; `nil` when they have no timeout.
    init?(_ rules: BodyRules?) {
        guard let rules, rules.idleTimeout != nil else { return nil }
        // Held by the timer until the exchange stops it (it always does, once the hop is over).
        rules.watch { [self] in fire() }
    }

    /// Whether the timer fired.
    var fired: Bool {
        target.withLockedValue { if case .fired = $0 { true } else { false } }
    }

    /// Stops the hop's current work: the wait or the call.
    private func fire() {
        let stopping = target.withLockedValue { target -> Target in
            defer { target = .fired }
            return target
        }
        switch stopping {
        case .wait(let stop): stop()
        case .call(let call): call.cancel()
        case .none, .fired: break
        }
    }

    /// Watches the hop's wait for a connection: `stop` ends it if the timer fires meanwhile (at
    /// once when it already has).
    func waiting(stoppedBy stop: @escaping @Sendable () -> Void) {
        let fired = target.withLockedValue { target -> Bool in
            if case .fired = target { return true }
            target = .wait(stop)
            return false
        }
        if fired { stop() }
    }

    /// The hop has its answer: nothing is left to stop (and the watch no longer holds the call).
    func finished() {
        target.withLockedValue { target in
            if case .call = target { target = .none }
        }
    }

    /// Watches `call` from now on; `false` when the timer already fired (the call must not start).
    func watching(_ call: HTTP1Call) -> Bool {
        target.withLockedValue { target in
            if case .fired = target { return false }
            target = .call(call)
            return true
        }
    }
}
