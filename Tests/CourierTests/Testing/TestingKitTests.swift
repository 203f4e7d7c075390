import Courier
import Foundation
import Testing

@Suite("Testing kit: path templates, routes, verification", .timeLimit(.minutes(1)))
struct TestingKitTests {
    @Test func templateMatchesVariablesAndDecodesThem() throws {
        let template = PathTemplate("/v1/users/{id}/files/{name}")
        let match = try #require(template.match("/v1/users/42/files/a%20b.txt"))
        #expect(match["id"] == "42")
        #expect(match.int("id") == 42)
        #expect(match["name"] == "a b.txt")
        #expect(template.variableNames == ["id", "name"])
    }

    @Test func templateRejectsOtherShapes() {
        let template = PathTemplate("/users/{id}")
        #expect(template.match("/users") == nil)
        #expect(template.match("/users/") == nil, "an empty segment is not a value")
        #expect(template.match("/users/1/posts") == nil)
        #expect(template.match("/people/1") == nil)
        #expect(template.match("/users/1/") == nil, "a trailing slash is significant")
        #expect(template.match("/users/1?expand=true")?["id"] == "1", "the query is ignored")
    }

    @Test func restVariableTakesTheRemainingSegments() {
        let template = PathTemplate("/files/{path...}")
        #expect(template.match("/files/a/b/c.txt")?["path"] == "a/b/c.txt")
        #expect(template.match("/files") == nil)
    }

    @Test func strayBracesAreLiterals() {
        #expect(PathTemplate("/a/{b").match("/a/%7Bb") != nil)
        #expect(PathTemplate("/a/{b c}").match("/a/x") == nil)
        #expect(PathTemplate("/").match("/") != nil)
        #expect(PathTemplate("").match("/") != nil)
    }

    @Test func routesHandTheVariablesToTheHandler() async throws {
        let executor = InMemoryExecutor(routes: [
            .init(.get, "/v1/users/{id}") { request, parameters in
                guard let id = parameters.int("id") else { return .status(400) }
                return .json(User(id: id, name: "user \(id)"))
            },
            .init(.delete, "/v1/users/{id}", .status(204)),
        ])
        let user = try await executor.send(Request.get |> baseURL(api) |> path("users", 7) |> decode(User.self))
        #expect(user == User(id: 7, name: "user 7"))
        let bad = await expectCourierError {
            _ = try await executor.send(Request.get |> baseURL(api) |> path("users", "x") |> decode(User.self))
        }
        #expect(bad?.status == 400)
        let deleted = try await executor.send(Request.delete |> baseURL(api) |> path("users", 7))
        #expect(deleted.status == 204)
    }

    @Test func scriptedRouteFailsTwiceThenSucceeds() async throws {
        let executor = InMemoryExecutor(routes: [
            .init(.get, "/v1/users", script: [.status(503), .status(503)], then: .json([User(id: 1, name: "Ada")]))
        ])
        let users = Request.get |> baseURL(api) |> path("users") |> decode([User].self)
        let statuses = await (1...2).asyncMap { _ in await expectCourierError { _ = try await executor.send(users) }?.status }
        #expect(statuses == [503, 503])
        #expect(try await executor.send(users) == [User(id: 1, name: "Ada")])
    }

    @Test func scriptedFaultsWithManualClockTestRetriesWithoutSleeping() async throws {
        let clock = ManualClock()
        let backend = InMemoryExecutor.scripted([.status(503), .status(503)], then: .json([User(id: 1, name: "Ada")]))
        let policy = RetryPolicy(maxAttempts: 3, baseDelay: .seconds(1), maxDelay: .seconds(4))
        let executor = backend.with(RetryMiddleware(policy: policy, clock: clock, random: .seeded(1)))
        let users = Request.get |> baseURL(api) |> path("users") |> decode([User].self)
        let task = Task { try await executor.send(users) }
        // Each backoff (jittered below its ceiling) ends when the manual clock passes it.
        for _ in 1...2 {
            try await clock.waitForSleepers(1)
            clock.advance(by: .seconds(4))
        }
        #expect(try await task.value == [User(id: 1, name: "Ada")])
        #expect(backend.requests.count == 3)
        #expect(clock.totalSleeps == 2)
    }

    @Test func verifyCountPassesAndFailsWithTheList() async throws {
        let executor = InMemoryExecutor { _ in .status(204) }
        _ = try await executor.send(Request.get |> baseURL(api) |> path("users", 1))
        _ = try await executor.send(Request.get |> baseURL(api) |> path("users", 2))
        try executor.verify(.get("/v1/users/{id}"), count: 2)
        #expect(executor.requests(matching: .get("/v1/users/{id}")).count == 2)
        let failure = #expect(throws: VerificationFailure.self) { try executor.verify(.get("/v1/users/{id}"), count: 3) }
        let message = failure?.description ?? ""
        #expect(message.contains("expected 3 requests matching GET /v1/users/{id}, received 2"))
        #expect(message.contains("0: GET https://api.example.com/v1/users/1"))
    }

    @Test func verifyOrderShowsWhereTheSequencesDiffer() async throws {
        let executor = InMemoryExecutor { _ in .status(204) }
        _ = try await executor.send(Request.get |> baseURL(api) |> path("users"))
        _ = try await executor.send(Request.delete |> baseURL(api) |> path("users", 3))
        try executor.verify(order: [.get("/v1/users"), .delete("/v1/users/{id}")])
        let failure = #expect(throws: VerificationFailure.self) {
            try executor.verify(order: [.get("/v1/users"), .post("/v1/users"), .delete("/v1/users/{id}")])
        }
        let message = failure?.description ?? ""
        #expect(message.contains("requests differ at position 1 (expected 3, received 2)"))
        #expect(message.contains("- 1: POST /v1/users\n+ 1: DELETE https://api.example.com/v1/users/3"))
        #expect(message.contains("- 2: DELETE /v1/users/{id}\n+ 2: (nothing)"))
    }

    @Test func verifyRequestsShowsALineDiffWithSecretsHidden() async throws {
        let executor = InMemoryExecutor { _ in .status(204) }
        let sent = Request.get |> baseURL(api) |> path("users") |> header("X-Trace", "b") |> bearer("secret-token")
        _ = try await executor.send(sent)
        try executor.verify(requests: [sent])
        let expected = Request.get |> baseURL(api) |> path("users") |> header("X-Trace", "a") |> bearer("secret-token")
        let failure = #expect(throws: VerificationFailure.self) { try executor.verify(requests: [expected]) }
        let message = failure?.description ?? ""
        #expect(message.contains("request 0 differs"))
        #expect(message.contains("- X-Trace: a\n+ X-Trace: b"))
        #expect(message.contains("  GET /v1/users HTTP/1.1"))
        #expect(!message.contains("secret-token"))
        let otherToken = Request.get |> baseURL(api) |> path("users") |> header("X-Trace", "b") |> bearer("other")
        let hidden = #expect(throws: VerificationFailure.self) { try executor.verify(requests: [otherToken]) }
        #expect(hidden?.description.contains("differ only in a redacted value") == true)
        #expect(hidden?.description.contains("other") == false)
    }

    @Test func verifyRequestsReportsBodyAndOptionDifferences() async throws {
        let executor = InMemoryExecutor { _ in .status(204) }
        _ = try await executor.send(Request.post |> baseURL(api) |> text("two") |> timeout(5))
        let failure = #expect(throws: VerificationFailure.self) {
            try executor.verify(requests: [Request.post |> baseURL(api) |> text("one") |> timeout(9)])
        }
        let message = failure?.description ?? ""
        #expect(message.contains("# body: expected 3 bytes \"one\", received 3 bytes \"two\""))
        #expect(message.contains("# timeout: 9.0 vs 5.0"))
    }

    @Test func seededRandomSourceRepeats() {
        let a = RandomSource.seeded(42)
        let b = RandomSource.seeded(42)
        #expect((0..<5).map { _ in a.next() } == (0..<5).map { _ in b.next() })
        #expect((0..<100).allSatisfy { _ in (0..<1).contains(a.fraction()) })
    }

    /// A task cancelled before it sleeps ends its sleep at once, as on a real clock, and is not
    /// counted as a sleeper: it was parked for ever, counted by `waitForSleepers`, so a test that
    /// replaced a sleeper (an idle timer's queue does) could advance the clock before the real
    /// one slept and then wait for ever.
    @Test func aSleepInATaskAlreadyCancelledEndsAtOnce() async throws {
        let clock = ManualClock()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(for: .seconds(1))
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(clock.sleepers == 0)
    }

    /// A sleeper that never comes ends the wait with an explanation instead of hanging the run.
    @Test func waitingForASleeperThatNeverComesThrows() async throws {
        let clock = ManualClock()
        let retry = RetryMiddleware(policy: RetryPolicy(maxAttempts: 5), clock: clock, random: .seeded(1))
        let executor = InMemoryExecutor.scripted([.status(503)], then: .status(503)).with(retry)
        let task = Task { try await executor.send(Request.get |> baseURL(api)) }
        try await clock.waitForSleepers(1)
        clock.advance(by: .seconds(60))  // past RetryPolicy's default 60 s deadline: retries end
        _ = try? await task.value
        do {
            try await clock.waitForSleepers(1, timeout: .milliseconds(200))
            Issue.record("expected a timeout")
        } catch let timeout as ManualClock.WaitTimeout {
            #expect(timeout.sleeping == 0)
            #expect(timeout.totalSleeps >= 1)
            #expect(timeout.description.contains("deadline"))
        }
    }
}

extension Sequence {
    /// Maps with an async transform, in order.
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
