#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value guarded by a lock, for the little shared state executors keep (recorded requests,
/// completion gates).
///
/// `@unchecked Sendable` is sound here: `value` is private and only read or written inside
/// `withLock`, which holds `mutex` for the whole access, so no two threads touch it at once. The
/// closures passed to `withLock` are non-escaping and must not call back into the same instance.
/// (`Synchronization.Mutex` would say this in the type system, but needs macOS 15 / iOS 18; a
/// POSIX mutex rather than `NSLock`, which FoundationEssentials does not have. The mutex lives
/// at a stable address of its own, as a POSIX mutex must.)
package final class Locked<State>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: State

    package init(_ value: State) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the state.
    package func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}

extension Locked: CustomReflectable {
    /// No children: shared state (recorded requests, credentials) is read through its owner's
    /// API, never through `dump` or a debugger's reflection, which could show a secret.
    package var customMirror: Mirror { Mirror(self, children: []) }
}
