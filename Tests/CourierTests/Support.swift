import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A user model shared by the tests.
struct User: Codable, Hashable, Sendable {
    var id: Int
    var name: String
}

/// An error body shaped like a typical API's.
struct APIError: Codable, Error, Hashable, Sendable {
    var code: String
    var message: String
}

let api = "https://api.example.com/v1"

extension Request {
    /// The rendered URL string, or a description of the failure.
    var renderedURL: String {
        do { return try url().absoluteString } catch { return "error: \(error)" }
    }

    /// The problem kinds, in order.
    var problemKinds: [RequestProblem.Kind] { problems.map(\.kind) }
}

/// Expects `body` to throw a `CourierError` and returns it.
func expectCourierError(
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
final class Box<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
