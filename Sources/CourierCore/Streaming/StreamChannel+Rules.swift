#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The exchange's rules, applied where the transport hands a body's bytes over.
extension StreamChannel {
    /// Holds the body to `rules` from now on, counting what already arrived: a body already past
    /// the size limit stops at once, one that already ended short or long ends with the framing
    /// error instead, and the idle timer watches the rest.
    package func enforce(_ rules: BodyRules) {
        enum Outcome {
            case stop(CourierError)
            case watch
            case done
        }
        let outcome = state.withLock { state -> Outcome in
            guard !state.terminated else { return .done }
            state.rules = rules
            if let maximum = rules.maximumSize, state.received > maximum { return .stop(rules.tooLarge) }
            guard let end = state.end else { return .watch }
            if case .finished = end, !state.endSeen, let failure = rules.framingError(received: state.received) {
                state.end = .failed(failure)
            }
            return .done
        }
        switch outcome {
        case .stop(let error): terminate(error)
        case .done: rules.timer?.stop()
        case .watch:
            guard let timer = rules.timer else { return }
            if rules.pausesForReader { timer.hold { [weak self] in self?.hasUnread ?? false } }
            // The error is made only if the timer fires: it redacts the request.
            timer.start { [weak self] in self?.terminate(rules.timedOut) }
        }
    }

    /// Tells the rules the response's head, once it arrives after they were set (a transport
    /// that gathers the body under them learns the head first): an error they stop the body with
    /// carries it.
    package func noteHead(_ head: Response) {
        state.withLock { state in state.rules?.head = head }
    }

    /// Whether body bytes wait unread: the reader, not the network, is behind.
    var hasUnread: Bool { state.withLock { $0.buffered > 0 || $0.spilling } }
}
