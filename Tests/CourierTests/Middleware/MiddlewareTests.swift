import Courier
import Foundation
import Testing

@Suite("Middleware")
struct MiddlewareTests {
    /// Appends its name to a shared trace before and after the rest of the chain.
    struct Tracer: Middleware {
        let name: String
        let trace: Box<[String]>
        func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
            trace.withLock { $0.append("\(name) in") }
            let response = try await next(request |> addingHeader("X-Seen-By", name))
            trace.withLock { $0.append("\(name) out") }
            return response
        }
    }

    @Test func firstMiddlewareIsOutermost() async throws {
        let trace = Box([String]())
        let base = InMemoryExecutor { _ in .status(200) }
        let executor = base.with(Tracer(name: "a", trace: trace), Tracer(name: "b", trace: trace))
        _ = try await executor.send(Request.get |> baseURL(api))
        let order: [String] = trace.withLock { $0 }
        #expect(order == ["a in", "b in", "b out", "a out"])
        #expect(base.requests.first?.headers.values(for: "X-Seen-By") == ["a", "b"])
    }

    @Test func wrappedExecutorIsAnExecutorAgain() async throws {
        let trace = Box([String]())
        let executor = InMemoryExecutor { _ in .status(200) }.with(Tracer(name: "inner", trace: trace))
            .with(Tracer(name: "outer", trace: trace))
        _ = try await executor.send(Request.get |> baseURL(api))
        let order: [String] = trace.withLock { $0 }
        #expect(order == ["outer in", "inner in", "inner out", "outer out"])
    }

    @Test func middlewareCanShortCircuit() async throws {
        struct Offline: Middleware {
            func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
                StreamedResponse(Response(status: 503, body: Data("offline".utf8)))
            }
        }
        let base = InMemoryExecutor { _ in .status(200) }
        let response = try await base.with(Offline()).send(Request.get |> baseURL(api))
        #expect(response.status == 503)
        #expect(base.requests.isEmpty)
    }

    @Test func middlewareCanCallNextMoreThanOnce() async throws {
        struct RetryOnce: Middleware {
            func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
                let first = try await next(request)
                guard first.status == 503 else { return first }
                first.body.cancel()
                return try await next(request)
            }
        }
        let attempts = Box(0)
        let base = InMemoryExecutor { _ in
            attempts.withLock { $0 += 1 }
            return attempts.withLock { $0 } == 1 ? .status(503) : .text("ok")
        }
        #expect(try await base.with(RetryOnce()).send(Request.get |> baseURL(api) |> decodeText()) == "ok")
        #expect(base.requests.count == 2)
    }

    @Test func requestMadeInvalidByMiddlewareIsNotSent() async {
        struct Corrupt: Middleware {
            func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
                try await next(request |> header("X-Bad", "a\r\nInjected: 1"))
            }
        }
        let base = InMemoryExecutor { _ in .status(200) }
        let error = await expectCourierError { _ = try await base.with(Corrupt()).send(Request.get |> baseURL(api)) }
        guard case .invalidRequest = error?.cause else {
            Issue.record("unexpected \(String(describing: error))")
            return
        }
        #expect(base.requests.isEmpty)
    }

    @Test func defaultHeadersFillOnlyMissingOnes() async throws {
        let base = InMemoryExecutor { _ in .status(200) }
        let executor = base.with(DefaultHeadersMiddleware([.userAgent: "Courier/1", .accept: "application/json"]))
        _ = try await executor.send(Request.get |> baseURL(api) |> header("accept", "text/csv"))
        let sent = try #require(base.requests.first)
        #expect(sent.headers[.userAgent] == "Courier/1")
        #expect(sent.headers.values(for: .accept) == ["text/csv"])
    }

    @Test func loggingReportsRequestAndResponseWithoutSecrets() async throws {
        let events = Box([LoggingMiddleware.Event]())
        let base = InMemoryExecutor { _ in .text("fine") }
        let executor = base.with(LoggingMiddleware { event in events.withLock { $0.append(event) } })
        _ = try await executor.send(
            Request.get |> baseURL("https://u:pw-SECRET@api.test") |> path("me") |> bearer("BEARER-SECRET")
                |> query("token", "QUERY-SECRET") |> query("page", 1))
        let logged = events.withLock { $0 }
        #expect(logged.map(\.kind) == [.request, .response])
        let text = logged.map { "\($0) \(String(reflecting: $0.request))" }.joined(separator: "\n")
        for secret in ["pw-SECRET", "BEARER-SECRET", "QUERY-SECRET"] {
            #expect(!text.contains(secret), "leaked \(secret)")
        }
        #expect(logged[0].description == "→ GET https://api.test/me?token=<redacted>&page=1")
        #expect(logged[1].description.hasPrefix("← 200 GET https://api.test/me?token=<redacted>&page=1 ("))
        #expect(logged[1].description.hasSuffix(" 4 bytes)"))
        // The request that was sent still carries the real credential.
        #expect(base.requests.first?.headers[.authorization] == "Bearer BEARER-SECRET")
    }

    @Test func loggingReportsFailuresAndTellsTransientOnesApart() async {
        let events = Box([LoggingMiddleware.Event]())
        let sink: LoggingMiddleware.Sink = { event in events.withLock { $0.append(event) } }
        let offline = InMemoryExecutor { _ in .failure(URLError(.notConnectedToInternet)) }.with(LoggingMiddleware(sink: sink))
        _ = await expectCourierError { _ = try await offline.send(Request.get |> baseURL(api)) }
        struct Bug: Error {}
        let broken = InMemoryExecutor { _ in throw Bug() }.with(LoggingMiddleware(sink: sink))
        _ = await expectCourierError { _ = try await broken.send(Request.get |> baseURL(api)) }
        let failures = events.withLock { $0 }.filter { $0.kind == .failure }
        #expect(failures.count == 2)
        #expect(failures.map(\.isTransient) == [true, false])
        #expect(failures[0].description.contains("failed: transport failure"))
    }
}
