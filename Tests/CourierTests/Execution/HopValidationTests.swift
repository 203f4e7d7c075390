@_spi(Transports) import CourierCore
import CourierTesting
import Foundation
import Testing
import TestSupport

/// Each hop is validated once, in the exchange, before any transport sees it: the request the
/// front door validated goes out as it is; a hop a middleware changed, and every redirect, is
/// validated again there. A transport is told so (`StreamOptions.hopIsValid`) and validates
/// nothing itself.
@Suite("Exchange: every hop validated once, before the transport")
struct HopValidationTests {
    /// Answers `/a` with a redirect to `/b` and anything else with `200`, recording what each
    /// hop's options said and the path it was asked for.
    private final class Recording: Transport, @unchecked Sendable {
        let seen = Box([(path: String, valid: Bool)]())
        func send(hop request: Request, options: StreamOptions) async throws -> StreamedResponse {
            seen.withLock { $0.append((request.path, options.hopIsValid)) }
            if request.path == "/a" { return StreamedResponse(status: 302, headers: ["Location": "/b"], body: ByteStream(Data())) }
            return StreamedResponse(status: 200, body: ByteStream(Data("ok".utf8)))
        }
    }

    /// Breaks the request of the hop to `path`: a header value with a line break.
    private struct Breaks: Middleware {
        let path: String
        func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
            var request = request
            if request.path == path { request.headers.set(HeaderName(rawValue: "X-Injected"), "a\r\nEvil: 1") }
            return try await next(request)
        }
    }

    private static let start = Request.get |> url("https://api.test/a")

    @Test func everyHopReachesTheTransportValidatedWithOrWithoutMiddleware() async throws {
        for middleware in [false, true] {
            let transport = Recording()
            var exchange = Exchange(transport: transport)
            if middleware {
                exchange.middleware = [Breaks(path: "/none")]
                exchange.hopMiddleware = [Breaks(path: "/none")]
            }
            let response = try await exchange.send(Self.start)
            #expect(response.status == 200)
            let seen = transport.seen.withLock { $0 }
            #expect(seen.map(\.path) == ["/a", "/b"])
            #expect(seen.map(\.valid) == [true, true], "middleware: \(middleware)")
        }
    }

    @Test func aHopMiddlewareThatBreaksARedirectIsRefusedBeforeTheTransport() async throws {
        let transport = Recording()
        let exchange = Exchange(transport: transport, hopMiddleware: [Breaks(path: "/b")])
        let error = await #expect(throws: CourierError.self) { _ = try await exchange.send(Self.start) }
        guard case .invalidRequest(let problems) = error?.cause else {
            Issue.record("expected an invalid request, got \(String(describing: error))")
            return
        }
        #expect(problems.map(\.kind).contains(.invalidHeaderValue))
        #expect(transport.seen.withLock { $0.map(\.path) } == ["/a"])
    }

    @Test func aCallMiddlewareThatBreaksTheRequestIsRefusedBeforeTheTransport() async throws {
        let transport = Recording()
        let exchange = Exchange(transport: transport, middleware: [Breaks(path: "/a")])
        await #expect(throws: CourierError.self) { _ = try await exchange.send(Self.start) }
        await #expect(throws: CourierError.self) { _ = try await exchange.stream(Self.start) }
        #expect(transport.seen.withLock { $0.isEmpty })
    }

    @Test func executeWithoutTheFrontDoorStillValidatesEveryHop() async throws {
        let transport = Recording()
        let exchange = Exchange(transport: transport)
        let invalid = Self.start |> header(HeaderName(rawValue: "X-Bad"), "a\nb")
        await #expect(throws: CourierError.self) { _ = try await exchange.execute(invalid, options: StreamOptions()) }
        #expect(transport.seen.withLock { $0.isEmpty })
        _ = try await exchange.execute(Self.start, options: StreamOptions())
        #expect(transport.seen.withLock { $0.map(\.valid) } == [true, true])
    }

    @Test func theInMemoryExecutorRefusesAHopAMiddlewareBrokeAndRecordsNothingOfIt() async throws {
        let executor = InMemoryExecutor(routes: [
            .init(.get, "/a", .status(302, headers: ["Location": "/b"])),
            .init(.get, "/b", .text("b")),
        ])
        await #expect(throws: CourierError.self) { _ = try await executor.eachHop(Breaks(path: "/b")).send(Self.start) }
        #expect(executor.requests.map(\.path) == ["/a"])
    }
}
