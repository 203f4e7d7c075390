/// Runs a completion-handler operation as `async`, with cancellation.
///
/// `start` begins the operation, calls its completion when done and returns an action that
/// cancels it. The continuation is resumed exactly once: by the first completion, or with
/// `CancellationError` as soon as the task is cancelled (the operation is then cancelled too, and
/// a late completion is ignored), so a transport that never reports cancellation cannot hang the
/// caller.
package func withCallback<Value: Sendable>(
    _ start: (@escaping @Sendable (Result<Value, any Error>) -> Void) -> @Sendable () -> Void
) async throws -> Value {
    let state = Locked(CallbackState<Value>())
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
            let proceed = state.withLock { state -> Bool in
                guard !state.cancelled else { return false }
                state.continuation = continuation
                return true
            }
            guard proceed else {
                continuation.resume(throwing: CancellationError())
                return
            }
            let cancel = start { result in
                let waiting = state.withLock { state in
                    defer { state.continuation = nil }
                    return state.continuation
                }
                waiting?.resume(with: result)
            }
            let cancelNow = state.withLock { state -> Bool in
                state.cancel = cancel
                return state.cancelled
            }
            if cancelNow { cancel() }
        }
    } onCancel: {
        let (waiting, cancel) = state.withLock { state in
            state.cancelled = true
            defer { state.continuation = nil }
            return (state.continuation, state.cancel)
        }
        cancel?()
        waiting?.resume(throwing: CancellationError())
    }
}

private struct CallbackState<Value: Sendable> {
    var continuation: CheckedContinuation<Value, any Error>?
    var cancel: (@Sendable () -> Void)?
    var cancelled = false
}
