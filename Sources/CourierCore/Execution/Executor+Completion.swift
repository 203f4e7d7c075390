import Dispatch
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A handle that cancels a request started with a completion handler.
public final class CancellationHandle: Sendable {
    private let state = Locked<(cancelled: Bool, action: (@Sendable () -> Void)?)>((false, nil))

    init() {}

    /// Cancels the request. The completion is called with ``CourierError/Cause/cancelled`` unless
    /// it was already called; calling this again does nothing.
    public func cancel() {
        let action = state.withLock { state -> (@Sendable () -> Void)? in
            guard !state.cancelled else { return nil }
            state.cancelled = true
            return state.action
        }
        action?()
    }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Sets what cancelling does; runs it at once if already cancelled.
    func onCancel(_ action: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { state -> Bool in
            state.action = action
            return state.cancelled
        }
        if runNow { action() }
    }
}

/// Calls a completion at most once.
final class CompletionGate<Value: Sendable>: Sendable {
    private let completion: Locked<(@Sendable (Result<Value, CourierError>) -> Void)?>
    private let queue: DispatchQueue?

    init(queue: DispatchQueue? = nil, _ completion: @escaping @Sendable (Result<Value, CourierError>) -> Void) {
        self.completion = Locked(completion)
        self.queue = queue
    }

    func finish(_ result: Result<Value, CourierError>) {
        let pending = completion.withLock { completion in
            defer { completion = nil }
            return completion
        }
        guard let pending else { return }
        if let queue { queue.async { pending(result) } } else { pending(result) }
    }
}

extension Executor {
    /// Sends a resource and calls `completion` with the decoded value or the error, for code that
    /// does not use `async`.
    ///
    /// `completion` is called exactly once: with the result, or with
    /// ``CourierError/Cause/cancelled`` as soon as the returned handle is cancelled. It runs on
    /// `queue` when one is given (`.main` for UI code), otherwise on whatever thread finished the
    /// work (a cooperative-pool thread, or the thread that called `cancel()`).
    ///
    /// ```swift
    /// executor.send(users, queue: .main) { result in self.show(result) }
    /// ```
    /// - Parameters:
    ///   - resource: What to fetch and how to decode it.
    ///   - queue: The queue to call `completion` on; `nil` (the default) for any thread.
    ///   - completion: Called once with the result.
    /// - Returns: A handle that cancels the request.
    @discardableResult
    public func send<Value: Sendable>(
        _ resource: Resource<Value>, queue: DispatchQueue? = nil,
        completion: @escaping @Sendable (Result<Value, CourierError>) -> Void
    ) -> CancellationHandle {
        let gate = CompletionGate(queue: queue, completion)
        let handle = CancellationHandle()
        let task = Task {
            do throws(CourierError) {
                gate.finish(.success(try await self.send(resource)))
            } catch {
                gate.finish(.failure(error))
            }
        }
        handle.onCancel {
            task.cancel()
            gate.finish(.failure(CourierError(.cancelled, request: resource.request)))
        }
        return handle
    }
}
