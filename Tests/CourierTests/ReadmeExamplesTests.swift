import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The README's snippets, kept compiling (and, where they need no network, running).
@Suite("README examples")
struct ReadmeExamplesTests {
    let token = "readme-token"
    let nextCursor: String? = nil
    let newUser = User(id: 3, name: "Grace")
    let password = "pw"
    let pngData = Data([0x89, 0x50])
    let userID = 42
    let key = "k"

    struct Draft: Decodable, Sendable {}

    /// The opening example, as written; compiled, not run (it would reach the network).
    func openingExample() async throws -> [User] {
        let users: Resource<[User]> = .get |> baseURL("https://api.example.com/v1") |> path("users")
            |> query("page", 2) |> bearer(token) |> decode([User].self)
        let list = try await URLSessionExecutor().send(users)
        return list
    }

    @Test func buildRecipes() throws {
        let api: RequestBuilder = baseURL("https://api.example.com/v1") <> accept(.json) <> userAgent("MyApp/1.0")

        let search = .get |> api |> path("users", "search")
            |> query("q", "a+b c")
            |> query("ids", [1, 2, 3])
            |> query("cursor", nextCursor)
            |> timeout(10)

        let create = .post |> api |> path("users") |> json(newUser) |> bearer(token)
        let login = .post |> api |> path("login") |> form(["user": "ada", "password": password])
        let upload = .put |> api |> path("avatars", userID) |> body(pngData, contentType: "image/png")
        let keyed = .get |> api |> apiKey(key, in: .query("api_key"))

        #expect(try search.validatedURL().absoluteString == "https://api.example.com/v1/users/search?q=a%2Bb%20c&ids=1&ids=2&ids=3")
        for request in [search, create, login, upload, keyed] { #expect(request.problems.isEmpty) }
        #expect(!keyed.description.contains("api_key=k"))
    }

    @Test func decodeRecipes() throws {
        let api: RequestBuilder = baseURL("https://api.example.com/v1")
        let user = .get |> api |> path("users", 42) |> decode(User.self)
        let withErrors = .get |> api |> path("users", 42) |> decode(User.self, error: APIError.self)
        let maybe = .get |> api |> path("drafts", 1) |> decodeIfPresent(Draft.self)
        let removed = .delete |> api |> path("users", 42) |> decodeEmpty()
        let names = (.get |> api |> path("users") |> decode([User].self)).map { $0.map(\.name) }
        let strict = user.validate(status: 200..<300).validate(contentType: .json)
        #expect(withErrors.request == user.request)
        #expect(try maybe.decode(Response(status: 204)) == nil)
        try removed.decode(Response(status: 204))
        #expect(try names.decode(Response(status: 200, body: Data(#"[{"id":1,"name":"Ada"}]"#.utf8))) == ["Ada"])
        #expect(throws: CourierError.self) { try strict.decode(Response(status: 200, body: Data("{}".utf8))) }
    }

    @Test func errorRecipe() async {
        let executor = InMemoryExecutor { _ in .json(APIError(code: "gone", message: "User deleted"), status: 410) }
        let withErrors = .get |> baseURL(api) |> path("users", 42) |> decode(User.self, error: APIError.self)
        var shown = ""
        do {
            _ = try await executor.send(withErrors)
        } catch {
            switch error.cause {
            case .unacceptableStatus(404, _): shown = "not found"
            case .unacceptableStatus(_, let body as APIError): shown = body.message
            case .timedOut, .transport: shown = "offline"
            case .cancelled: break
            case .invalidRequest(let problems): shown = "\(problems)"
            default: shown = "\(error)"
            }
        }
        #expect(shown == "User deleted")
    }

    @Test func middlewareAndTestingRecipes() async throws {
        let lines = Box([String]())
        let server = InMemoryExecutor(routes: [
            .init(.get, "/v1/users", .json([User(id: 1, name: "Ada")])),
            .init(.delete, "/v1/users/1", .status(204)),
        ])
        let executor = server.with(
            DefaultHeadersMiddleware([.userAgent: "MyApp/1.0"]),
            LoggingMiddleware { event in lines.withLock { $0.append("\(event)") } }
        )
        let users: Resource<[User]> = .get |> baseURL("https://api.example.com/v1") |> path("users")
            |> query("page", 2) |> bearer(token) |> decode([User].self)
        let list = try await executor.send(users)
        #expect(list == [User(id: 1, name: "Ada")])
        #expect(server.requests.first?.headers[.authorization] == "Bearer \(token)")
        #expect(lines.withLock { $0.count } == 2)
    }

    @Test func testingRecipe() async throws {
        let users: Resource<[User]> = .get |> baseURL("https://api.example.com/v1") |> path("users")
            |> bearer(token) |> decode([User].self)
        let executor = InMemoryExecutor(routes: [
            .init(.get, "/v1/users", .json([User(id: 1, name: "Ada")])),
            .init(.get, "/v1/users/{id}") { request, parameters in
                .json(User(id: parameters.int("id") ?? 0, name: "Ada"))
            },
            .init(.delete, "/v1/users/{id}", script: [.status(503), .status(503)], then: .status(204)),
        ])
        let list = try await executor.send(users)
        #expect(list == [User(id: 1, name: "Ada")])
        #expect(executor.requests.first?.headers[.authorization] == "Bearer \(token)")
        try executor.verify(.get("/v1/users"), count: 1)
        try executor.verify(order: [.get("/v1/users")])
    }

    @Test func recordAndReplayRecipe() async throws {
        let users: Resource<[User]> = .get |> baseURL("https://api.example.com/v1") |> path("users")
            |> bearer(token) |> decode([User].self)
        let fixtureURL = FileManager.default.temporaryDirectory.appendingPathComponent("readme-\(UUID().uuidString).har")
        defer { try? FileManager.default.removeItem(at: fixtureURL) }
        let server = InMemoryExecutor(routes: [.init(.get, "/v1/users", .json([User(id: 1, name: "Ada")]))])

        let recorder = HARRecorder()
        let live = server.with(recorder)
        let list = try await live.send(users)
        try recorder.har.write(to: fixtureURL)

        let replay = try HARReplayExecutor(contentsOf: fixtureURL)
        #expect(try await replay.send(users) == list)
    }

    @Test func paginationRecipe() async throws {
        struct Listing: Codable, Sendable {
            var items: [User]
            var nextCursor: String?
        }
        let executor = InMemoryExecutor { request in
            let after = URLComponents(url: try request.validatedURL(), resolvingAgainstBaseURL: false)?.queryItems?.first?.value
            return after == nil
                ? .json(Listing(items: [User(id: 1, name: "Ada")], nextCursor: "2"))
                : .json(Listing(items: [User(id: 2, name: "Bob")], nextCursor: nil))
        }
        let users = Request.get |> baseURL(api) |> path("users") |> decode([User].self)
        var shown: [[User]] = []
        func show(_ page: [User]) { shown.append(page) }
        let linked = InMemoryExecutor { _ in .json([User(id: 1, name: "Ada")]) }

        for try await page in linked.paginate(users, next: .linkHeader()) {
            show(page.value)
        }
        let listing = Request.get |> baseURL(api) |> path("users") |> decode(Listing.self)
        let all = try await executor.paginate(listing, next: .cursor("after", from: \.nextCursor))
            .values.reduce(into: []) { $0 += $1.items }
        #expect(shown == [[User(id: 1, name: "Ada")]])
        #expect(all.map(\.id) == [1, 2])
    }

    @Test func completionRecipe() async {
        let executor = InMemoryExecutor { _ in .json([User]()).delayed(by: .seconds(10)) }
        let users = .get |> baseURL(api) |> path("users") |> decode([User].self)
        let outcome = await withCheckedContinuation { (done: CheckedContinuation<String, Never>) in
            let handle = executor.send(users) { result in
                switch result {
                case .success(let list): done.resume(returning: "\(list)")
                case .failure(let error): done.resume(returning: "\(error.cause)")
                }
            }
            handle.cancel()
        }
        #expect(outcome == "cancelled")
    }
}

/// The README's resilience recipe, compiled.
enum ReadmeResilienceRecipe {
    struct Tokens: Sendable { func refresh() async throws -> String { "t" } }

    static func build(tokens: Tokens, api: @escaping RequestBuilder) -> (any Executor, Request) {
        let executor = URLSessionExecutor(
            configuration: .default,
            redirects: .follow,
            maximumResponseSize: 10 << 20
        ).with(
            RetryMiddleware(policy: RetryPolicy(maxAttempts: 3)),
            AuthRefreshMiddleware(origins: ["https://api.example.com"]) { _ in try await tokens.refresh() },
            ConcurrencyLimitMiddleware(limit: 6),
            DeduplicationMiddleware(),
            LoggingMiddleware(bodies: .on(maxBytes: 2048)) { _ in }
        )
        let report = .get |> api |> path("report") |> deadline(30)
        return (executor, report)
    }
}
