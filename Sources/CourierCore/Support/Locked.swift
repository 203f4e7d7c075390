import Foundation

/// A value guarded by a lock, for the little shared state executors keep (recorded requests,
/// completion gates).
///
/// `@unchecked Sendable` is sound here: `value` is private and only read or written inside
/// `withLock`, which holds `lock` for the whole access, so no two threads touch it at once. The
/// closures passed to `withLock` are non-escaping and must not call back into the same instance.
/// (`Synchronization.Mutex` would say this in the type system, but needs macOS 15 / iOS 18.)
package final class Locked<State>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: State

    package init(_ value: State) { self.value = value }

    /// Runs `body` with exclusive access to the state.
    package func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

extension Locked: CustomReflectable {
    /// No children: shared state (recorded requests, credentials) is read through its owner's
    /// API, never through `dump` or a debugger's reflection, which could show a secret.
    package var customMirror: Mirror { Mirror(self, children: []) }
}
