import Courier
import Foundation
import Testing

// Helpers shared by the unit and integration test targets.

/// Expects `body` to throw a `CourierError` and returns it.
public func expectCourierError(
    sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void
) async -> CourierError? {
    do {
        try await body()
        Issue.record("expected a CourierError, got success", sourceLocation: sourceLocation)
        return nil
    } catch let error as CourierError {
        return error
    } catch {
        Issue.record("expected a CourierError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// A lock-protected box for test bookkeeping. `@unchecked Sendable` is sound: `value` is only
/// touched inside `withLock`, which holds the lock.
public final class Box<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    public init(_ value: Value) { self.value = value }

    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

/// The transport failure an error carries, when it is one.
public func transportFailure(_ error: CourierError?) -> TransportFailure? {
    guard case .transport(let failure)? = error?.cause else { return nil }
    return failure
}

/// Waits until `condition` holds, looking again every millisecond: for state that other tasks
/// change (a request reaching a gate, a reader parking). It waits for progress, never for a
/// guessed time, and ends early only when the waiting task is cancelled.
///
/// Never `while !condition { await Task.yield() }`: a task that yields stays runnable, and two
/// such loops kept both of this machine's worker threads busy while the task they waited for
/// never ran (a unit-test run hung for 30 minutes in `limitKeepsAtMostNInFlightInArrivalOrder`).
/// A sleep leaves the threads to the tasks being waited for.
public func waitUntil(_ condition: () -> Bool) async {
    while !condition() {
        do { try await Task.sleep(for: .milliseconds(1)) } catch { return }
    }
}
