import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("In-memory executor", .timeLimit(.minutes(1)))
struct InMemoryExecutorTests {
    private let users = Request.get |> baseURL(api) |> path("users") |> decode([User].self)

    @Test func routesByMethodAndPath() async throws {
        let executor = InMemoryExecutor(routes: [
            .init(.get, "/v1/users", .json([User(id: 1, name: "Ada")])),
            .init(.post, "/v1/users", .status(201)),
        ])
        #expect(try await executor.send(users) == [User(id: 1, name: "Ada")])
        let created = try await executor.send(Request.post |> baseURL(api) |> path("users") |> json(User(id: 2, name: "B")))
        #expect(created.status == 201)
    }

    /// A mistyped route is an error naming the request and the closest route, not a silent 404.
    @Test func unmatchedRouteIsAnErrorNamingTheClosestRoute() async throws {
        let executor = InMemoryExecutor(routes: [
            .init(.get, "/v1/orders", .status(200)),
            .init(.get, "/v1/users/{id}", .status(200)),
            .init(.post, "/v1/user", .status(201)),
        ])
        let error = await expectCourierError { _ = try await executor.send(Request.get |> baseURL(api) |> path("user")) }
        guard case .unanswered(let message) = error?.cause else {
            Issue.record("unexpected \(String(describing: error))")
            return
        }
        #expect(message.contains("GET /v1/user"))
        #expect(message.contains("closest is POST /v1/user"))
        #expect(message.contains("method POST, not GET"))
        let empty = await expectCourierError { _ = try await InMemoryExecutor(routes: []).send(users) }
        #expect("\(String(describing: empty))".contains("route table is empty"))
    }

    /// Recording is bounded: a long run keeps the latest requests, not all of them.
    @Test func recordingKeepsTheLatestRequestsUpToTheLimit() async throws {
        let executor = InMemoryExecutor(recordingLimit: 3) { _ in .status(204) }
        for page in 1...10 { _ = try await executor.send(Request.get |> baseURL(api) |> query("page", page)) }
        #expect(executor.requests.map { $0.queryItems.first?.value } == ["8", "9", "10"])
        #expect(executor.droppedRequests == 7)
        let silent = InMemoryExecutor(recordingLimit: 0) { _ in .status(204) }
        _ = try await silent.send(Request.get |> baseURL(api))
        #expect(silent.requests.isEmpty)
        #expect(silent.droppedRequests == 1)
    }

    @Test func notFoundFallbackIsOptIn() async throws {
        let executor = InMemoryExecutor(routes: [], fallback: .status(404))
        let error = await expectCourierError { _ = try await executor.send(users) }
        guard case .unacceptableStatus(404, _) = error?.cause else {
            Issue.record("unexpected \(String(describing: error))")
            return
        }
    }

    /// Stub delays run on an injected clock: no real sleeping in tests.
    @Test func stubDelaysUseTheInjectedClock() async throws {
        let clock = ManualClock()
        let executor = InMemoryExecutor(routes: [.init(.get, "/v1/users", .json([User]()).delayed(by: .seconds(30)))], clock: clock)
        let task = Task { try await executor.send(users) }
        try await clock.waitForSleepers(1)
        clock.advance(by: .seconds(30))
        #expect(try await task.value.isEmpty)
    }

    @Test func routesMatchTheEncodedPath() async throws {
        let executor = InMemoryExecutor(routes: [.init(.get, "/files/a%2Fb", .text("ok"))])
        let text = try await executor.send(Request.get |> baseURL("https://files.test") |> path("files", "a/b") |> decodeText())
        #expect(text == "ok")
    }

    @Test func recordsEveryRequestInOrder() async throws {
        let executor = InMemoryExecutor { _ in .status(204) }
        for page in 1...3 {
            _ = try await executor.send(Request.get |> baseURL(api) |> path("items") |> query("page", page))
        }
        #expect(executor.requests.map(\.queryItems) == (1...3).map { [QueryItem(name: "page", value: "\($0)")] })
        executor.reset()
        #expect(executor.requests.isEmpty)
    }

    @Test func invalidRequestIsNeverRecordedOrAnswered() async throws {
        let executor = InMemoryExecutor { _ in
            Issue.record("handler must not run")
            return .status(200)
        }
        let error = await expectCourierError {
            _ = try await executor.send(Request.get |> baseURL(api) |> header("X", "a\nb") |> decodeEmpty())
        }
        guard case .invalidRequest(let problems) = error?.cause else {
            Issue.record("unexpected \(String(describing: error))")
            return
        }
        #expect(problems.map(\.kind) == [.invalidHeaderValue])
        #expect(executor.requests.isEmpty)
        // Calling execute directly is checked too.
        await #expect(throws: CourierError.self) { _ = try await executor.execute(Request.get |> path("x"), options: .buffered) }
    }

    @Test func anyStatusHeadersAndBody() async throws {
        let executor = InMemoryExecutor { _ in
            .status(418, headers: ["X-Teapot": "yes"], body: Data("short and stout".utf8))
        }
        let response = try await executor.send(Request.get |> baseURL(api))
        #expect(response.status == 418)
        #expect(response.headers["x-teapot"] == "yes")
        #expect(response.body == Data("short and stout".utf8))
        #expect(response.url?.absoluteString == api)
    }

    @Test func transportFailuresMapToCauses() async throws {
        let cases: [(URLError.Code, String)] = [
            (.timedOut, "timedOut"), (.notConnectedToInternet, "notConnected"), (.cannotConnectToHost, "cannotConnect"),
            (.cancelled, "cancelled"),
        ]
        for (code, expected) in cases {
            let executor = InMemoryExecutor { _ in .failure(URLError(code)) }
            let error = await expectCourierError { _ = try await executor.send(users) }
            let actual: String
            switch error?.cause {
            case .timedOut: actual = "timedOut"
            case .cancelled: actual = "cancelled"
            case .transport(let failure): actual = "\(failure.kind)"
            default: actual = "other"
            }
            #expect(actual == expected)
        }
    }

    @Test func transientErrorsAreFlagged() async {
        let executor = InMemoryExecutor { _ in .failure(URLError(.networkConnectionLost)) }
        let error = await expectCourierError { _ = try await executor.send(users) }
        #expect(error?.isTransient == true)
    }

    @Test func delayedResponseArrives() async throws {
        let executor = InMemoryExecutor { _ in .json([User(id: 9, name: "late")]).delayed(by: .milliseconds(20)) }
        #expect(try await executor.send(users).first?.id == 9)
    }

    @Test func cancellationDuringDelayEndsWithCancelled() async throws {
        let executor = InMemoryExecutor { _ in .json([User]()).delayed(by: .seconds(30)) }
        let task = Task { try await executor.send(users) }
        try await Task.sleep(for: .milliseconds(50))
        task.cancel()
        let result = await task.result
        guard case .failure(let error as CourierError) = result, case .cancelled = error.cause else {
            Issue.record("unexpected \(result)")
            return
        }
    }

    @Test func alreadyCancelledTaskSendsNothing() async throws {
        let executor = InMemoryExecutor { _ in .status(200) }
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await executor.send(Request.get |> baseURL(api))
        }
        let result = await task.result
        guard case .failure(let error as CourierError) = result, case .cancelled = error.cause else {
            Issue.record("unexpected \(result)")
            return
        }
        #expect(executor.requests.isEmpty)
    }

    @Test func safeToUseFromManyTasks() async throws {
        let executor = InMemoryExecutor { request in .text(request.queryItems.first?.value ?? "") }
        let results = try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<200 {
                group.addTask { try await executor.send(Request.get |> baseURL(api) |> query("i", index) |> decodeText()) }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        let expected: Set<String> = Set((0..<200).map { String($0) })
        #expect(Set(results) == expected)
        #expect(executor.requests.count == 200)
    }

    @Test func responseVariantReturnsMetadata() async throws {
        let executor = InMemoryExecutor { _ in .json([User(id: 1, name: "a")], headers: ["ETag": "\"v1\""]) }
        let result = try await executor.response(for: users)
        #expect(result.value.count == 1)
        #expect(result.response.headers[.eTag] == "\"v1\"")
        #expect(result.response.status == 200)
    }

    @Test func handlerErrorsBecomeTransportFailures() async {
        struct Boom: Error {}
        let executor = InMemoryExecutor { _ in throw Boom() }
        let error = await expectCourierError { _ = try await executor.send(users) }
        guard case .transport(let failure) = error?.cause else {
            Issue.record("unexpected \(String(describing: error))")
            return
        }
        #expect(failure.kind == .other)
        #expect(error?.underlyingError is Boom)
    }
}
