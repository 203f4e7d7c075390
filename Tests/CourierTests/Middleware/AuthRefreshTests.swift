import Courier
import Foundation
import Testing

@Suite("Auth refresh middleware")
struct AuthRefreshTests {
    /// A server that accepts only `Bearer <valid>`, counting what it saw.
    final class Server: Sendable {
        let valid = Box("fresh")
        let seen = Box([String]())
        let unauthorized = Box(0)

        func executor() -> InMemoryExecutor {
            InMemoryExecutor { request in
                let header = request.headers[.authorization] ?? ""
                self.seen.withLock { $0.append(header) }
                if header == "Bearer " + self.valid.withLock({ $0 }) { return .text("ok") }
                self.unauthorized.withLock { $0 += 1 }
                return .status(401)
            }
        }
    }

    private let me = Request.get |> baseURL("https://api.test") |> path("me") |> decodeText()

    @Test func attachesTheCredential() async throws {
        let server = Server()
        let auth = AuthRefreshMiddleware(origins: ["https://api.test"], credential: "fresh") { _ in "unused" }
        #expect(try await server.executor().with(auth).send(me) == "ok")
        let sent: [String] = server.seen.withLock { $0 }
        #expect(sent == ["Bearer fresh"])
    }

    @Test func sixParallel401sCauseExactlyOneRefresh() async throws {
        let server = Server()
        server.valid.withLock { $0 = "new" }
        let refreshes = Box(0)
        let release = Box<CheckedContinuation<Void, Never>?>(nil)
        let auth = AuthRefreshMiddleware(origins: ["https://api.test"], credential: "old") { rejected in
            #expect(rejected == "old")
            refreshes.withLock { $0 += 1 }
            // Hold the refresh until all six requests have seen their 401.
            await withCheckedContinuation { continuation in release.withLock { $0 = continuation } }
            return "new"
        }
        let executor = server.executor().with(auth)
        let tasks = (0..<6).map { _ in Task { try await executor.send(me) } }
        await waitUntil { server.unauthorized.withLock { $0 } >= 6 && release.withLock { $0 != nil } }
        release.withLock { $0?.resume() }
        for task in tasks { #expect(try await task.value == "ok") }
        #expect(refreshes.withLock { $0 } == 1)
        let seen = server.seen.withLock { $0 }
        let old: Int = seen.filter { $0 == "Bearer old" }.count
        let new: Int = seen.filter { $0 == "Bearer new" }.count
        #expect(old == 6)
        #expect(new == 6)
        #expect(auth.currentCredential == "new")
    }

    /// A waiter cancelled during a refresh leaves at once; the refresh goes on for the others.
    @Test func aCancelledWaiterLeavesAtOnceWhileTheRefreshContinues() async throws {
        let server = Server()
        server.valid.withLock { $0 = "new" }
        let release = Box<CheckedContinuation<Void, Never>?>(nil)
        let auth = AuthRefreshMiddleware(origins: ["https://api.test"], credential: "old") { _ in
            await withCheckedContinuation { continuation in release.withLock { $0 = continuation } }
            return "new"
        }
        let executor = server.executor().with(auth)
        let cancelled = Task { try await executor.send(me) }
        let patient = Task { try await executor.send(me) }
        await waitUntil { server.unauthorized.withLock { $0 } >= 2 && release.withLock { $0 != nil } }
        cancelled.cancel()
        // Ends while the refresh is still held: no waiting for it.
        let error = await expectCourierError { _ = try await cancelled.value }
        guard case .cancelled = error?.cause else {
            Issue.record("expected .cancelled, got \(String(describing: error))")
            return
        }
        #expect(release.withLock { $0 != nil })
        release.withLock { $0?.resume() }
        #expect(try await patient.value == "ok")
        #expect(auth.currentCredential == "new")
    }

    @Test func aWaiterCancelledBeforeItJoinsLeavesAtOnce() async throws {
        let release = Box<CheckedContinuation<Void, Never>?>(nil)
        let auth = AuthRefreshMiddleware(origins: ["https://api.test"]) { _ in
            await withCheckedContinuation { continuation in release.withLock { $0 = continuation } }
            return "fresh"
        }
        let server = Server().executor()
        let executor = server.with(auth)
        let first = Task { try await executor.send(me) }
        await waitUntil { release.withLock { $0 != nil } }
        // Straight into the middleware, past `send`'s own cancellation check.
        let request = me.request
        let late = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await auth.intercept(request) { try await server.execute($0, options: .buffered) }
        }
        await #expect(throws: CancellationError.self) { _ = try await late.value }
        release.withLock { $0?.resume() }
        #expect(try await first.value == "ok")
    }

    @Test func a401OnAReplacedCredentialRetriesWithoutRefreshing() async throws {
        let server = Server()
        server.valid.withLock { $0 = "v2" }
        let refreshes = Box(0)
        let auth = AuthRefreshMiddleware(origins: ["https://api.test"], credential: "v1") { _ in
            refreshes.withLock { $0 += 1 }
            return "v2"
        }
        let executor = server.executor().with(auth)
        #expect(try await executor.send(me) == "ok")
        #expect(refreshes.withLock { $0 } == 1)
        // A request that still carried v1 (sent before the refresh) and got a 401 uses v2 directly.
        #expect(try await executor.send(me) == "ok")
        #expect(refreshes.withLock { $0 } == 1)
    }

    @Test func missingCredentialIsFetchedFirst() async throws {
        let server = Server()
        let auth = AuthRefreshMiddleware(origins: ["https://api.test"]) { rejected in
            #expect(rejected == nil)
            return "fresh"
        }
        #expect(try await server.executor().with(auth).send(me) == "ok")
        let sent: [String] = server.seen.withLock { $0 }
        #expect(sent == ["Bearer fresh"])
    }

    @Test func refreshFailureReachesEveryWaiterAndClearsTheCredential() async throws {
        struct Expired: Error {}
        let server = Server()
        let attempts = Box(0)
        let release = Box<CheckedContinuation<Void, Never>?>(nil)
        let auth = AuthRefreshMiddleware(origins: ["https://api.test"], credential: "old") { _ in
            attempts.withLock { $0 += 1 }
            await withCheckedContinuation { continuation in release.withLock { $0 = continuation } }
            throw Expired()
        }
        let executor = server.executor().with(auth)
        let tasks = (0..<3).map { _ in Task { try await executor.send(me) } }
        await waitUntil { server.unauthorized.withLock { $0 } >= 3 && release.withLock { $0 != nil } }
        release.withLock { $0?.resume() }
        for task in tasks {
            let result = await task.result
            guard case .failure(let error as CourierError) = result, case .authenticationFailed = error.cause else {
                Issue.record("unexpected \(result)")
                continue
            }
            #expect(error.underlyingError is Expired)
        }
        #expect(attempts.withLock { $0 } == 1)
        #expect(auth.currentCredential == nil)
    }

    @Test func tooManyRefreshesInAWindowIsAnError() async throws {
        let clock = ManualClock()
        let server = Server()
        server.valid.withLock { $0 = "never-issued" }
        let refreshes = Box(0)
        let auth = AuthRefreshMiddleware(origins: ["https://api.test"], credential: "t0", maxRefreshes: 2, window: .seconds(60), clock: clock) { _ in
            let count = refreshes.withLock { count -> Int in
                count += 1
                return count
            }
            return "t\(count)"
        }
        let executor = server.executor().with(auth)
        // Each call: 401, refresh, 401 again (the server accepts none); the third refresh is refused.
        _ = await expectCourierError { _ = try await executor.send(me) }
        _ = await expectCourierError { _ = try await executor.send(me) }
        let error = await expectCourierError { _ = try await executor.send(me) }
        guard case .authenticationFailed(let reason) = error?.cause else {
            Issue.record("unexpected \(String(describing: error))")
            return
        }
        #expect(reason.contains("more than 2"))
        #expect(refreshes.withLock { $0 } == 2)
        // After the window, refreshing is allowed again.
        clock.advance(by: .seconds(61))
        _ = await expectCourierError { _ = try await executor.send(me) }
        #expect(refreshes.withLock { $0 } == 3)
    }

    @Test func otherOriginsNeverSeeTheCredential() async throws {
        let server = Server()
        let auth = AuthRefreshMiddleware(origins: ["https://api.test"], credential: "fresh") { _ in "x" }
        let executor = server.executor().with(auth)
        for other in ["https://cdn.test", "http://api.test", "https://api.test:8443", "https://evil.api.test"] {
            _ = try await executor.send(Request.get |> baseURL(other) |> path("me"))
        }
        #expect(server.seen.withLock { $0 } == ["", "", "", ""])
    }
}
