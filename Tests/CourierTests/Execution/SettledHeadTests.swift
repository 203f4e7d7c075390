import Courier
import Foundation
import Testing

/// What the core does with a head before anyone sees it, whatever the transport: a body complete
/// with the head is complete, a body its reader leaves unread is not a failure, and an
/// informational status never ends an exchange.
@Suite("Settled heads: empty, unread and informational")
struct SettledHeadTests {
    /// Logged events, in order.
    private static func logged(_ executor: some Executor, _ request: Request, read: @Sendable (StreamedResponse) async throws -> Void) async throws
        -> [LoggingMiddleware.Event]
    {
        let events = Box([LoggingMiddleware.Event]())
        let logging = executor.with(LoggingMiddleware { event in events.withLock { $0.append(event) } })
        do {
            // The response goes away at the end of this scope: a body left unread ends there.
            let response = try await logging.stream(request)
            try await read(response)
        }
        return events.withLock { $0 }
    }

    /// A generated client drops the body of an operation that declares no content: the stream of
    /// a complete, empty body must not be logged as cancelled.
    @Test(arguments: [
        Stub.stream([], status: 204, headers: [.contentLength: "0"]),
        .stream([], status: 204),
        .stream([], status: 304),
        .stream([], status: 200, headers: [.contentLength: "0"]),
        .stream([], status: 404, headers: [.contentLength: "0"]),
    ])
    func aBodyCompleteWithTheHeadIsCompleteWhetherOrNotItIsRead(stub: Stub) async throws {
        let server = InMemoryExecutor { _ in stub }
        let events = try await Self.logged(server, Request.get |> baseURL(api)) { response in
            #expect(response.body.bufferedData == Data())
            // Dropped unread, as generated code does.
        }
        #expect(events.map(\.kind) == [.request, .response])
        #expect(events.allSatisfy { $0.error == nil })
        #expect(events.last?.isStreamed == false)
        #expect(events.last?.description.hasSuffix(", 0 bytes)") == true)
        #expect(!events.map(\.description).joined().contains("cancel"))
    }

    @Test func theAnswerToAHeadIsCompleteWithItsHead() async throws {
        let server = InMemoryExecutor { _ in .stream([], status: 200, headers: [.contentLength: "5000"]) }
        let response = try await server.stream(Request.head |> baseURL(api))
        #expect(response.body.bufferedData == Data())
        #expect(response.expectedLength == 5000)
    }

    /// `Content-Length: 0` beside a transfer coding does not frame the body: it is read as sent.
    @Test func aZeroLengthBesideATransferCodingIsNotTakenForAnEmptyBody() async throws {
        let server = InMemoryExecutor { _ in
            .stream([Data("chunked body".utf8)], status: 200, headers: [.contentLength: "0", .transferEncoding: "chunked"])
        }
        let response = try await server.stream(Request.get |> baseURL(api))
        #expect(response.body.bufferedData == nil)
        #expect(try await response.body.collect(upTo: 100) == Data("chunked body".utf8))
    }

    /// A body the caller drops unread, or stops reading, is not a failed request: the log says
    /// what happened, and no error is recorded.
    @Test func aBodyLeftUnreadIsLoggedAsNotReadNotAsAFailure() async throws {
        let server = InMemoryExecutor { _ in .stream([Data("unread".utf8), Data(" and more".utf8)], status: 404) }
        let unread = try await Self.logged(server, Request.get |> baseURL(api)) { _ in }
        #expect(unread.map(\.kind) == [.request, .response, .streamEnded])
        #expect(unread[1].isStreamed)
        #expect(unread[1].description.hasSuffix(", body streaming)"))
        let ended = try #require(unread.last)
        #expect(ended.error == nil)
        #expect(ended.streamedBytes == 0)
        #expect(ended.description.hasSuffix(", body not read)"))
        guard case .abandoned? = ended.ending else {
            Issue.record("ending \(String(describing: ended.ending))")
            return
        }
        let partly = try await Self.logged(server, Request.get |> baseURL(api)) { response in
            for try await _ in response.body { break }
        }
        #expect(partly.last?.error == nil)
        #expect(partly.last?.description.hasSuffix(", 6 bytes read, the rest of the body not read)") == true)
        let whole = try await Self.logged(server, Request.get |> baseURL(api)) { response in
            _ = try await response.body.collect(upTo: 100)
        }
        #expect(whole.last?.description.hasSuffix(", 15 bytes streamed)") == true)
        guard case .complete? = whole.last?.ending else {
            Issue.record("ending \(String(describing: whole.last?.ending))")
            return
        }
    }

    /// A cancelled reading task is still a cancellation, and a failed transfer a failure.
    @Test func aCancelledReaderAndAFailedTransferAreStillFailures() async throws {
        let server = InMemoryExecutor { _ in .stream([Data("partial".utf8)]).failing(afterBytes: 7) }
        let failed = try await Self.logged(server, Request.get |> baseURL(api)) { response in
            _ = try? await response.body.collect(upTo: 100)
        }
        #expect(failed.last?.error?.errorType == "connectionLost")
        #expect(failed.last?.ending?.error != nil)
    }

    /// Informational statuses and statuses below 100 never end an exchange, on any path.
    @Test(arguments: [101, 100, 150, 199, 0, 99])
    func aStatusBelow200IsABadResponse(status: Int) async throws {
        for stub in [Stub.status(status, body: Data("x".utf8)), .stream([Data("x".utf8)], status: status)] {
            let server = InMemoryExecutor { _ in stub }
            let sent = await expectCourierError { _ = try await server.send(Request.get |> baseURL(api)) }
            #expect(transportFailure(sent)?.kind == .badResponse, "send, \(status)")
            let streamed = await expectCourierError { _ = try await server.stream(Request.get |> baseURL(api)) }
            #expect(transportFailure(streamed)?.kind == .badResponse, "stream, \(status)")
            let logged = Box([LoggingMiddleware.Event]())
            let withLogging = server.with(LoggingMiddleware { event in logged.withLock { $0.append(event) } })
            _ = await expectCourierError { _ = try await withLogging.send(Request.get |> baseURL(api)) }
            #expect(logged.withLock { $0 }.map(\.kind) == [.request, .failure])
        }
        let message = await expectCourierError { _ = try await InMemoryExecutor { _ in .status(101) }.send(Request.get |> baseURL(api)) }
        if status == 101 { #expect(message?.summary.contains("switched protocols") == true) }
    }
}
