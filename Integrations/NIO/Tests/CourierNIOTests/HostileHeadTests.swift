import Courier
import CourierConformance
import CourierNIO
import Foundation
import Testing

/// Response heads and framing a hostile server can send, in this process: what makes
/// AsyncHTTPClient trap (a status below 100) must be a typed error here, and a connection that
/// carried a broken response is never lent again.
@Suite("NIOExecutor: hostile response heads, in process", .timeLimit(.minutes(2)))
struct HostileHeadTests {
    /// The outcome of one call as a line: `status N body` or `error KIND: message`.
    static func outcome(_ query: String, executor: NIOExecutor = makeExecutor()) async throws -> String {
        do {
            let response = try await executor.send(.get |> url(try servers().hostile + "/head?" + query))
            return "status \(response.status) \(String(decoding: response.body, as: UTF8.self))"
        } catch let error as CourierError {
            guard case .transport(let failure) = error.cause else { return "error \(error.cause)" }
            return "error \(failure.kind): \(failure.message)"
        }
    }

    @Test(arguments: [
        "status=000&framing=length", "status=000&framing=chunked", "status=000&framing=close", "status=099&framing=length",
        "status=000&framing=length&body=", "status=042&framing=chunked&keep=1",
    ])
    func aStatusBelow100IsABadResponseNotATrap(head: String) async throws {
        let outcome = try await Self.outcome(head)
        #expect(outcome.hasPrefix("error badResponse:"), "\(head): \(outcome)")
        #expect(outcome.contains("not an HTTP status"), "\(head): \(outcome)")
    }

    @Test(arguments: [
        "status=101&framing=length", "status=101&framing=close&keep=1", "status=150&framing=length", "status=150&framing=chunked",
        "status=150&framing=close", "status=100&framing=length", "status=1000&framing=length", "status=abc&framing=length",
        "status=2000&framing=chunked", "status=-20&framing=length",
    ])
    func otherHeadsThatAreNotAFinalAnswerAreABadResponse(head: String) async throws {
        let outcome = try await Self.outcome(head)
        #expect(outcome.hasPrefix("error badResponse:"), "\(head): \(outcome)")
    }

    /// An informational head before the final one is consumed (RFC 9110 §15.2), and the final
    /// answer is the response.
    @Test func anInformationalHeadBeforeTheAnswerIsSkipped() async throws {
        let interim = "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nfinal!"
        let outcome = try await Self.outcome("status=103&reason=Early&framing=length&body=&keep=1&extra=" + Self.encoded(interim))
        #expect(outcome == "status 200 final!")
    }

    /// Informational heads are bounded (32 heads, 256 KiB of fields): a few pass, a server that
    /// sends them without end (or huge ones) gets a typed error and the connection is closed,
    /// instead of being read for as long as it cares to send.
    @Test(arguments: [
        ("count=5", "status 200 final!"), ("count=32", "status 200 final!"),
        ("count=4&size=60000", "status 200 final!"),
        ("count=33", "error badResponse: the server sent more than 32 informational (1xx) heads before its answer"),
        ("count=0", "error badResponse: the server sent more than 32 informational (1xx) heads before its answer"),
        ("count=5&size=60000", "error badResponse: the server sent more than 256 KiB of informational (1xx) heads before its answer"),
    ])
    func informationalHeadsAreBounded(query: String, expected: String) async throws {
        let executor = makeExecutor()
        do {
            let response = try await executor.send(.get |> url(try servers().hostile + "/informational?" + query))
            #expect("status \(response.status) \(String(decoding: response.body, as: UTF8.self))" == expected, "\(query)")
        } catch let error as CourierError {
            guard case .transport(let failure) = error.cause else { throw error }
            #expect("error \(failure.kind): \(failure.message)" == expected, "\(query)")
        }
    }

    /// A 1xx head with a body (RFC 9110 §15.2: an informational response has none): the bytes
    /// where the next head should be are not HTTP.
    @Test func anInformationalHeadWithABodyIsABadResponse() async throws {
        let final = "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nfinal!"
        let outcome = try await Self.outcome("status=103&reason=Early&framing=length&body=early&keep=1&extra=" + Self.encoded(final))
        #expect(outcome.hasPrefix("error badResponse:"), "\(outcome)")
    }

    /// A body shorter than its `Content-Length`, cut by the server closing: a truncated body.
    @Test func aBodyShorterThanItsLengthIsTruncated() async throws {
        let executor = makeExecutor()
        do {
            _ = try await executor.send(.get |> url(try servers().hostile + "/truncated"))
            Issue.record("a 40-byte body announced as 100 was accepted")
        } catch let error as CourierError {
            guard case .transport(let failure) = error.cause else { throw error }
            #expect(failure.kind == .truncatedBody)
        }
    }

    /// Bytes after a response's end (a body longer than its framing, or a second response
    /// behind the first) never answer the next request: the connection is closed, not lent.
    @Test func bytesAfterAResponseNeverAnswerTheNextRequest() async throws {
        // A transport of its own: one connection per origin, so a reused one would be this one.
        let executor = try NIOExecutor(configuration: NIOTransport.Configuration(connectionsPerHost: 1))
        defer { Task { [transport = executor.transport] in await transport.shutdown() } }
        let smuggled = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 8\r\n\r\nsmuggled"
        let first = try await Self.outcome("status=200&body=hello&keep=1&extra=" + Self.encoded(smuggled), executor: executor)
        #expect(first == "status 200 hello")
        for _ in 0..<3 {
            let next = try await Self.outcome("status=200&body=second&keep=1", executor: executor)
            #expect(next == "status 200 second")
        }
    }

    /// A head far larger than any real one is refused, with its connection, before it fills memory.
    @Test func anOversizedHeadIsABadResponse() async throws {
        let outcome = try await Self.outcome("status=200&framing=length&pad=2000000")
        #expect(outcome.hasPrefix("error badResponse:"), "\(outcome.prefix(200))")
    }

    /// A head of ordinary size (a few kilobytes of cookies, say) is read as usual.
    @Test func aLargeButReasonableHeadIsRead() async throws {
        let outcome = try await Self.outcome("status=200&framing=length&pad=32000")
        #expect(outcome == "status 200 hello")
    }

    static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
    }
}
