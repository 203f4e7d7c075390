@testable import CourierCore
import Foundation
import Testing
import TestSupport

/// An error of a call is mapped to a `CourierError` once, where it arises: a transport's own
/// `CourierError` reaches the caller as the transport made it (the caller's request added as
/// context), and what a middleware or a transport threw that is not one is mapped by the exchange
/// as the call leaves it. `Exchange.execute`, `send` and `stream` throw `CourierError` as a type.
@Suite("Exchange: every error mapped once, where it arises")
struct ErrorMappingTests {
    /// What a transport or a middleware of these tests throws that Courier does not know.
    private struct Foreign: Error {}

    /// Fails every hop with `failure`.
    private struct Failing: Transport {
        let failure: any Error
        func send(hop request: Request, options: StreamOptions) async throws -> StreamedResponse { throw failure }
    }

    /// Answers with a head whose body then fails with `failure`.
    private struct CutShort: Transport {
        let failure: any Error
        func send(hop request: Request, options: StreamOptions) async throws -> StreamedResponse {
            let (stream, continuation) = ByteStream.makeStream(bufferLimit: options.bufferLimit)
            _ = continuation.yield(Data("partial".utf8))
            continuation.finish(throwing: failure)
            return StreamedResponse(status: 200, body: stream)
        }
    }

    /// Throws `failure` instead of calling the rest of the chain.
    private struct Refusing: Middleware {
        let failure: any Error
        func intercept(_ request: Request, next: Next) async throws -> StreamedResponse { throw failure }
    }

    private static let request = Request.get |> url("https://api.test/items?token=s3cret") |> bearer("s3cret")

    @Test func aTransportsOwnErrorArrivesAsItWasMadeWithTheCallersRequest() async throws {
        let made = CourierError(.transport(TransportFailure(.cannotConnect, message: "refused by the test")))
        for executor in [Exchange(transport: Failing(failure: made)), Exchange(transport: Failing(failure: made), middleware: [Passing()])] {
            let error = await #expect(throws: CourierError.self) { _ = try await executor.send(Self.request) }
            guard case .transport(let failure) = error?.cause else {
                Issue.record("expected the transport's failure, got \(String(describing: error))")
                continue
            }
            #expect(failure.kind == .cannotConnect)
            #expect(failure.message == "refused by the test")
            #expect(error?.request?.url?.host == "api.test")
            #expect(!"\(String(describing: error))".contains("s3cret"))
        }
    }

    @Test func aForeignErrorIsMappedOnceAtTheExchangeWhereverItWasThrown() async throws {
        let executors: [(String, Exchange)] = [
            ("transport", Exchange(transport: Failing(failure: Foreign()))),
            ("hop middleware", Exchange(transport: Failing(failure: Foreign()), hopMiddleware: [Refusing(failure: Foreign())])),
            ("call middleware", Exchange(transport: Failing(failure: Foreign()), middleware: [Refusing(failure: Foreign())])),
        ]
        for (origin, exchange) in executors {
            // `execute` is the boundary: it throws `CourierError` as a type.
            do {
                _ = try await exchange.execute(Self.request, options: StreamOptions())
                Issue.record("\(origin): the call succeeded")
            } catch {
                let typed: CourierError = error
                guard case .transport(let failure) = typed.cause else {
                    Issue.record("\(origin): expected a transport failure, got \(typed)")
                    continue
                }
                #expect(failure.kind == .other, "\(origin)")
                #expect(typed.underlyingError is Foreign, "\(origin)")
                #expect(typed.request != nil, "\(origin)")
            }
            let sent = await #expect(throws: CourierError.self) { _ = try await exchange.send(Self.request) }
            #expect(sent?.underlyingError is Foreign, "\(origin)")
            let streamed = await #expect(throws: CourierError.self) { _ = try await exchange.stream(Self.request) }
            #expect(streamed?.underlyingError is Foreign, "\(origin)")
        }
    }

    @Test func aCancellationThrownByAMiddlewareIsTheCallsCancellation() async throws {
        let exchange = Exchange(transport: Failing(failure: Foreign()), middleware: [Refusing(failure: CancellationError())])
        let error = await #expect(throws: CourierError.self) { _ = try await exchange.send(Self.request) }
        guard case .cancelled = error?.cause else {
            Issue.record("expected a cancellation, got \(String(describing: error))")
            return
        }
        #expect(error?.request != nil)
    }

    @Test func aBodyThatFailsAsItArrivesNamesTheCallWhenReadWhole() async throws {
        let cut = CourierError(.transport(TransportFailure(.truncatedBody, message: "the peer closed mid-body")))
        let exchange = Exchange(transport: CutShort(failure: cut))
        let error = await #expect(throws: CourierError.self) { _ = try await exchange.send(Self.request) }
        guard case .transport(let failure) = error?.cause else {
            Issue.record("expected the body's failure, got \(String(describing: error))")
            return
        }
        #expect(failure.kind == .truncatedBody)
        #expect(error?.request?.url?.path == "/items")
        #expect(!"\(String(describing: error))".contains("s3cret"))
    }

    /// Calls the rest of the chain: a per-call middleware that changes nothing.
    private struct Passing: Middleware {
        func intercept(_ request: Request, next: Next) async throws -> StreamedResponse { try await next(request) }
    }
}
