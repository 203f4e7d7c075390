import Courier
import Foundation
import Testing

/// The exchange over a transport, in memory: one redirect loop for every transport, per-hop
/// middleware inside it, per-call middleware outside it.
@Suite("Exchange: hops, redirects and the two places for middleware")
struct ExchangeTests {
    /// A transport of stubs: `/a` → 302 `/b` (same origin) → 307 another origin `/c` → 200.
    private static func chain(third: Stub = .text("done")) -> InMemoryExecutor {
        InMemoryExecutor(routes: [
            .init(.get, "/a", .status(302, headers: ["Location": "/b"])),
            .init(.get, "/b", .status(307, headers: ["Location": "https://other.test/c"], body: Data("moved".utf8))),
            .init(.get, "/c", third),
        ])
    }

    private static let start = Request.get |> url("https://api.test/a") |> bearer("EXCHANGE-SECRET")

    @Test func followsEveryHopAndDropsCredentialsOnceTheChainLeavesTheOrigin() async throws {
        let transport = Self.chain()
        let response = try await transport.send(Self.start)
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "done")
        let sent = transport.requests
        #expect(sent.map { $0.url?.absoluteString } == ["https://api.test/a", "https://api.test/b", "https://other.test/c"])
        #expect(sent.map { $0.headers[.authorization] != nil } == [true, true, false])
    }

    @Test func hopMiddlewareSeesEachHopAsItGoesOutAndCallMiddlewareSeesTheCallOnce() async throws {
        let hops = Box([String]())
        let calls = Box([String]())
        let executor = Self.chain()
            .eachHop(Tap(log: hops, name: "outer"), Tap(log: hops, name: "inner"))
            .with(Tap(log: calls, name: "call"))
        _ = try await executor.send(Self.start)
        let call: [String] = calls.withLock { $0 }
        #expect(call == ["call → /a auth", "call ← 200"])
        let expected: [String] = [
            "outer → /a auth", "inner → /a auth", "inner ← 302", "outer ← 302",
            "outer → /b auth", "inner → /b auth", "inner ← 307", "outer ← 307",
            "outer → /c", "inner → /c", "inner ← 200", "outer ← 200",
        ]
        let seen: [String] = hops.withLock { $0 }
        #expect(seen == expected)
    }

    @Test func aHopMiddlewareThatAnswersItselfEndsTheHop() async throws {
        struct Answer: Middleware {
            func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
                request.path == "/b" ? StreamedResponse(status: 204, body: ByteStream(Data())) : try await next(request)
            }
        }
        let transport = Self.chain()
        let response = try await transport.eachHop(Answer()).send(Self.start)
        #expect(response.status == 204)
        #expect(transport.requests.count == 1)
    }

    @Test func aRefusingPolicyDeliversTheRedirectWithItsBody() async throws {
        var transport = Self.chain()
        transport.redirects = .refuse
        let response = try await transport.send(Self.start |> url("https://api.test/b"))
        #expect(response.status == 307)
        #expect(String(decoding: response.body, as: UTF8.self) == "moved")
        #expect(transport.requests.count == 1)
    }

    @Test func aRedirectThePolicyRefusesFailsWithTheCallersRequestAttachedAndNoSecret() async throws {
        let transport = InMemoryExecutor(routes: [.init(.get, "/a", .status(302, headers: ["Location": "file:///etc/passwd"]))])
        let error = await #expect(throws: CourierError.self) { _ = try await transport.send(Self.start) }
        guard case .transport(let failure)? = error?.cause else { Issue.record("\(String(describing: error))"); return }
        #expect(failure.kind == .redirectFailed)
        #expect(error?.request?.url?.path == "/a")
        #expect(!"\(String(describing: error))".contains("EXCHANGE-SECRET"))
    }

    /// The user's path: a login form posted over https, answered with a 307 to http. Nothing goes
    /// to the http target, and the error says why.
    @Test func aPostRedirectedFromHTTPSToHTTPNeverSendsItsBodyInClearText() async throws {
        let transport = InMemoryExecutor { request in
            request.url?.scheme == "https" ? .status(307, headers: ["Location": "http://api.test/login"]) : .text("got it")
        }
        let login = Request.post |> url("https://api.test/login") |> form(["user": "ada", "password": "EXCHANGE-SECRET"])
        let error = await #expect(throws: CourierError.self) { _ = try await transport.send(login) }
        guard case .transport(let failure)? = error?.cause else { Issue.record("\(String(describing: error))"); return }
        #expect(failure.kind == .redirectFailed)
        #expect(failure.message.contains("clear text"))
        #expect(transport.requests.map { $0.url?.scheme } == ["https"])
        #expect(!"\(String(describing: error))".contains("EXCHANGE-SECRET"))
    }

    @Test func aLongRedirectBodyIsCutNotRead() async throws {
        // 1 MiB of redirect body in 64 chunks: the exchange reads at most 64 KiB of it.
        let read = Box(0)
        let chunks = (0..<64).map { _ in Data(count: 16 << 10) }
        let transport = InMemoryExecutor(routes: [
            .init(.get, "/a", .stream(chunks, status: 302, headers: ["Location": "/c"])),
            .init(.get, "/c", .text("done")),
        ])
        let counting = transport.eachHop(CountBody(read: read))
        let response = try await counting.send(Self.start)
        #expect(response.status == 200)
        // Read until past 64 KiB: at most one 16 KiB chunk more.
        let drained: Int = read.withLock { $0 }
        let bound = 80 << 10
        #expect(drained <= bound)
    }

    @Test func aFailureBeforeTheHeadCarriesTheCallersRequest() async throws {
        let transport = InMemoryExecutor { _ in .failure(URLError(.cannotConnectToHost)) }
        let error = await #expect(throws: CourierError.self) { _ = try await transport.send(Self.start) }
        #expect(error?.request?.url?.host == "api.test")
        #expect(error?.request?.headers[.authorization] != "Bearer EXCHANGE-SECRET")
    }

    @Test func aCallbackExecutorGoesThroughTheSameExchange() async throws {
        // A completion-handler transport that hands back a cross-origin redirect, then a body
        // shorter than its Content-Length: the policy drops the credential, the framing check
        // refuses the body.
        let seen = Box([String]())
        let executor = CallbackExecutor { request, complete in
            let auth = request.headers[.authorization] == nil ? "" : " auth"
            seen.withLock { $0.append((request.url?.host ?? "") + (request.url?.path ?? "") + auth) }
            if request.path == "/a" {
                complete(.success(Response(status: 302, headers: ["Location": "https://other.test/b"])))
            } else {
                complete(.success(Response(status: 200, headers: ["Content-Length": "10"], body: Data("short".utf8))))
            }
            return {}
        }
        let error = await #expect(throws: CourierError.self) { _ = try await executor.send(Self.start) }
        guard case .transport(let failure)? = error?.cause else { Issue.record("\(String(describing: error))"); return }
        #expect(failure.kind == .truncatedBody)
        let hops: [String] = seen.withLock { $0 }
        #expect(hops == ["api.test/a auth", "other.test/b"])
    }

    @Test func logsPerHopCountEveryResendRetriesAndRedirectsAlike() async throws {
        // Logged per hop, inside a retry: the first attempt fails at its third hop (503), the
        // second succeeds; resend_count goes 0, 1, 2, then 1 (a retry), 2, 3.
        let calls = Box(0)
        let transport = InMemoryExecutor { request in
            switch request.path {
            case "/a": return .status(302, headers: ["Location": "/b"])
            case "/b": return .status(302, headers: ["Location": "/c"])
            default:
                let call = calls.withLock { count in
                    count += 1
                    return count
                }
                return call == 1 ? .status(503) : .text("done")
            }
        }
        let events = Box([LoggingMiddleware.Event]())
        let executor = transport
            .eachHop(LoggingMiddleware { event in events.withLock { $0.append(event) } })
            .with(RetryMiddleware(policy: RetryPolicy(maxAttempts: 2, baseDelay: .zero, maxDelay: .zero)))
        let response = try await executor.send(.get |> url("https://api.test/a"))
        #expect(response.status == 200)
        let sent = events.withLock { $0.filter { $0.kind == .request } }
        #expect(sent.map(\.resendCount) == [0, 1, 2, 1, 2, 3])
        #expect(sent.map(\.hop) == [0, 1, 2, 0, 1, 2])
    }

    @Test func twentyHopsAreFollowedAndTheTwentyFirstFails() async throws {
        let transport = InMemoryExecutor(routes: [
            .init(.get, "/hop/{n}") { _, parameters in
                let n = parameters.int("n") ?? 0
                return n == 0 ? .text("end") : .status(302, headers: ["Location": "/hop/\(n - 1)"])
            }
        ])
        let exchange = transport
        #expect(try await exchange.send(.get |> url("https://api.test/hop/20")).status == 200)
        await #expect(throws: CourierError.self) { _ = try await exchange.send(.get |> url("https://api.test/hop/21")) }
    }
}

/// Logs each request it passes on (its path, and "auth" when it carries credentials) and each
/// status that comes back.
private struct Tap: Middleware {
    let log: Box<[String]>
    let name: String
    func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
        let auth = request.headers[.authorization] == nil ? "" : " auth"
        log.withLock { $0.append("\(name) → \(request.path)\(auth)") }
        let response = try await next(request)
        log.withLock { $0.append("\(name) ← \(response.status)") }
        return response
    }
}

/// Counts the body bytes of every `302` as they are read.
private struct CountBody: Middleware {
    let read: Box<Int>
    func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
        var response = try await next(request)
        guard response.status == 302 else { return response }
        let read = self.read
        response.body = response.body.observing(chunk: { chunk in read.withLock { $0 += chunk.count } }, end: { _ in })
        return response
    }
}
