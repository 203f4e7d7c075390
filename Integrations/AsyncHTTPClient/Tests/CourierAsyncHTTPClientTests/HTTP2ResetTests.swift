import AsyncHTTPClient
import Courier
import CourierAsyncHTTPClient
import Foundation
import NIOPosix
import Testing

/// HTTP/2 streams reset and connections sent away (scripts/h2_hostile_server.py, over TLS with the
/// test CA): each is a typed, transient failure, a reset mid-body is a truncated body whichever way
/// the body is read, and the client goes on working afterwards.
@Suite("AsyncHTTPClient: HTTP/2 resets and GOAWAY", .serialized, .timeLimit(.minutes(2)))
struct HTTP2ResetTests {
    private static func withExecutor<T>(_ body: (AsyncHTTPClientExecutor, String) async throws -> T) async throws -> T {
        let environment = ProcessInfo.processInfo.environment
        let directory = try #require(environment["COURIER_TLS_DIR"], "run the tests with scripts/test, which starts the servers")
        let address = try #require(environment["COURIER_H2_HOSTILE_URL"], "run the tests with scripts/test, which starts the servers")
        let authority = try TLSOptions.Certificate(contentsOf: URL(fileURLWithPath: directory + "/ca.pem"))
        let configuration = try AsyncHTTPClientExecutor.clientConfiguration(tls: TLSOptions(trust: .systemAnd([authority])))
        let client = HTTPClient(eventLoopGroup: .singletonMultiThreadedEventLoopGroup, configuration: configuration)
        do {
            let result = try await body(try AsyncHTTPClientExecutor(client: client), address)
            try await client.shutdown()
            return result
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    private static func failure(_ error: CourierError?) -> TransportFailure? {
        guard case .transport(let failure)? = error?.cause else { return nil }
        return failure
    }

    @Test func aResetBeforeTheHeadIsATransientLostConnection() async throws {
        try await Self.withExecutor { executor, address in
            for path in ["/refused", "/goaway-unprocessed"] {
                let error = await #expect(throws: CourierError.self) { _ = try await executor.send(.get |> url(address + path)) }
                let failure = Self.failure(error)
                #expect(failure?.kind == .connectionLost, "\(path): \(String(describing: error))")
                #expect(error?.isTransient == true)
                #expect(!"\(String(describing: error))".contains("NIOHTTP2"), "a type name instead of a reason")
            }
            let refused = await #expect(throws: CourierError.self) { _ = try await executor.send(.get |> url(address + "/refused")) }
            #expect(Self.failure(refused)?.message.contains("not processed") == true)
            // The connection is still good for the next request.
            let next = try await executor.send(.get |> url(address + "/ok"))
            #expect(next.body == Data("hello".utf8))
        }
    }

    @Test func aResetOrGoawayMidBodyIsATruncatedBodyBufferedOrStreamed() async throws {
        try await Self.withExecutor { executor, address in
            for path in ["/reset-mid-body", "/goaway-mid-body"] {
                let buffered = await #expect(throws: CourierError.self) { _ = try await executor.send(.get |> url(address + path)) }
                #expect(Self.failure(buffered)?.kind == .truncatedBody, "\(path): \(String(describing: buffered))")
                #expect(buffered?.isTransient == true)
                let response = try await executor.stream(.get |> url(address + path))
                #expect(response.status == 200)
                let streamed = await #expect(throws: CourierError.self) { _ = try await response.body.collect(upTo: 1 << 20) }
                #expect(Self.failure(streamed)?.kind == .truncatedBody, "\(path): \(String(describing: streamed))")
            }
            let next = try await executor.send(.get |> url(address + "/ok"))
            #expect(next.status == 200)
        }
    }

    /// Retry middleware acts on it as on a lost HTTP/1.1 connection: a GET is sent again.
    @Test func aRefusedStreamIsRetriedForAnIdempotentRequest() async throws {
        try await Self.withExecutor { executor, address in
            let attempts = Attempts()
            let retrying = executor.with(attempts).with(RetryMiddleware(policy: RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(1))))
            await #expect(throws: CourierError.self) { _ = try await retrying.send(.get |> url(address + "/refused")) }
            #expect(attempts.count == 3)
        }
    }
}

/// Counts the attempts that reach the executor.
private final class Attempts: Middleware, @unchecked Sendable {
    // `@unchecked Sendable` is sound: `attempts` is only read or written with `lock` held.
    private let lock = NSLock()
    private var attempts = 0
    var count: Int { lock.withLock { attempts } }
    func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
        lock.withLock { attempts += 1 }
        return try await next(request)
    }
}
