import NIOConcurrencyHelpers
import NIOCore

extension EventLoopFuture where Value: Sendable {
    /// The future's value, awaited, and handed to the awaiting task under a lock the event loop
    /// takes first. What the loop made (a connection, a stream, a response head) is then ordered
    /// before the task reads it in a way ThreadSanitizer sees too: a continuation resumed before
    /// its task suspended (the future was complete before it was awaited) is ordered only by the
    /// Swift runtime's own atomics, which ThreadSanitizer cannot see.
    func handedOver() async throws -> Value {
        let box = NIOLockedValueBox<Value?>(nil)
        // Registered before `get()`'s own callback, so it runs first (callbacks run in order).
        whenSuccess { value in box.withLockedValue { $0 = value } }
        let value = try await get()
        return box.withLockedValue { $0 } ?? value
    }
}
