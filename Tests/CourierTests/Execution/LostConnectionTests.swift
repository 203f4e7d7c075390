import Courier
import Foundation
import Testing

/// A hop whose connection is lost before any answer is sent once more, and only when the request
/// may be sent again: the exchange's rule, the same on every transport.
@Suite("Exchange: a connection lost before any answer")
struct LostConnectionTests {
    /// A transport whose first `failures` sends fail with `kind`, then answer 200; it counts sends.
    private struct Flaky: Transport {
        let failures: Int
        var kind: TransportFailure.Kind = .connectionLost
        var reused: Bool? = nil
        /// The server said it did not process the request (an HTTP/2 REFUSED_STREAM, a GOAWAY).
        var notProcessed: Bool? = nil
        let sends = Locked(0)

        func send(hop request: Request, options: StreamOptions) async throws -> StreamedResponse {
            let attempt = sends.withLock { count -> Int in
                count += 1
                return count
            }
            if attempt <= failures {
                var failure = TransportFailure(kind, message: "the connection closed before the response arrived")
                failure.connectionWasReused = reused
                failure.requestWasNotProcessed = notProcessed
                throw CourierError(.transport(failure))
            }
            return StreamedResponse(head: Response(status: 200, headers: [:], body: Data(), url: try request.validatedURL()), body: ByteStream(Data("ok".utf8)))
        }
    }

    private static let items = "https://api.test/items"

    @Test(arguments: [Request.get, .head, .put, .delete, .options])
    func anIdempotentRequestIsSentOnceMore(_ method: Request) async throws {
        let transport = Flaky(failures: 1)
        let response = try await Exchange(transport: transport).send(method |> url(Self.items))
        #expect(response.status == 200)
        #expect(transport.sends.withLock { $0 } == 2)
    }

    /// A transport that says the lost connection was opened for this hop (a server resetting new
    /// connections, not closing an idle one) gets no resend: an origin that resets everything is
    /// not made to take each attempt twice. Kept-alive (or unknown) connections still get one.
    @Test(arguments: [(false, 1), (true, 2), (nil, 2)] as [(Bool?, Int)])
    func aHopLostOnAConnectionOpenedForItIsNotSentAgain(reused: Bool?, sends: Int) async throws {
        let transport = Flaky(failures: 1, reused: reused)
        _ = try? await Exchange(transport: transport).send(.get |> url(Self.items))
        #expect(transport.sends.withLock { $0 } == sends)
    }

    @Test func onlyOnceWhateverTheServerDoes() async throws {
        let transport = Flaky(failures: 5)
        let error = await #expect(throws: CourierError.self) { try await Exchange(transport: transport).send(.get |> url(Self.items)) }
        guard case .transport(let failure)? = error?.cause else { Issue.record("\(String(describing: error))"); return }
        #expect(failure.kind == .connectionLost)
        #expect(transport.sends.withLock { $0 } == 2)
    }

    @Test func aPostIsNotSentAgainUnlessItIsMarkedRetryable() async throws {
        let post = Flaky(failures: 1)
        await #expect(throws: CourierError.self) { try await Exchange(transport: post).send(.post |> url(Self.items) |> body(Data("x".utf8))) }
        #expect(post.sends.withLock { $0 } == 1)
        let optedIn = Flaky(failures: 1)
        let response = try await Exchange(transport: optedIn).send(.post |> url(Self.items) |> body(Data("x".utf8)) |> retryable())
        #expect(response.status == 200)
        #expect(optedIn.sends.withLock { $0 } == 2)
    }

    /// A request the server said it did not process is sent once more whatever its method (RFC
    /// 9113 §8.7), on a connection opened for it too, unless it opts out or its body cannot be
    /// read again.
    @Test func aRequestTheServerDidNotProcessIsSentOnceMoreWhateverItsMethod() async throws {
        let post = Flaky(failures: 1, reused: false, notProcessed: true)
        let response = try await Exchange(transport: post).send(.post |> url(Self.items) |> body(Data("x".utf8)))
        #expect(response.status == 200)
        #expect(post.sends.withLock { $0 } == 2)
        let twice = Flaky(failures: 2, notProcessed: true)
        await #expect(throws: CourierError.self) { try await Exchange(transport: twice).send(.patch |> url(Self.items) |> body(Data("x".utf8))) }
        #expect(twice.sends.withLock { $0 } == 2, "once more, not more")
        let optedOut = Flaky(failures: 1, notProcessed: true)
        await #expect(throws: CourierError.self) { try await Exchange(transport: optedOut).send(.post |> url(Self.items) |> retryable(false)) }
        #expect(optedOut.sends.withLock { $0 } == 1)
        let oneShot = Flaky(failures: 1, notProcessed: true)
        let chunks = AsyncStream<Data> { continuation in
            continuation.yield(Data("x".utf8))
            continuation.finish()
        }
        await #expect(throws: CourierError.self) { try await Exchange(transport: oneShot).send(.post |> url(Self.items) |> upload(chunks)) }
        #expect(oneShot.sends.withLock { $0 } == 1)
    }

    @Test func aRequestThatOptsOutOrWhoseBodyCannotBeReadAgainIsNotSentAgain() async throws {
        let optedOut = Flaky(failures: 1)
        await #expect(throws: CourierError.self) { try await Exchange(transport: optedOut).send(.get |> url(Self.items) |> retryable(false)) }
        #expect(optedOut.sends.withLock { $0 } == 1)
        let oneShot = Flaky(failures: 1)
        let chunks = AsyncStream<Data> { continuation in
            continuation.yield(Data("x".utf8))
            continuation.finish()
        }
        await #expect(throws: CourierError.self) { try await Exchange(transport: oneShot).send(.put |> url(Self.items) |> upload(chunks)) }
        #expect(oneShot.sends.withLock { $0 } == 1)
    }

    @Test(arguments: [TransportFailure.Kind.cannotConnect, .truncatedBody, .badResponse, .dnsFailure, .secureConnectionFailed])
    func otherFailuresAreNotSentAgain(_ kind: TransportFailure.Kind) async throws {
        let transport = Flaky(failures: 1, kind: kind)
        await #expect(throws: CourierError.self) { try await Exchange(transport: transport).send(.get |> url(Self.items)) }
        #expect(transport.sends.withLock { $0 } == 1)
    }

    @Test func eachHopOfARedirectChainHasItsOwnOneMoreTime() async throws {
        let sends = Locked([String]())
        struct Chain: Transport {
            let sends: Locked<[String]>
            func send(hop request: Request, options: StreamOptions) async throws -> StreamedResponse {
                let url = try request.validatedURL()
                let seen = sends.withLock { list -> Int in
                    list.append(url.path)
                    return list.filter { $0 == url.path }.count
                }
                if seen == 1 { throw CourierError(.transport(TransportFailure(.connectionLost, message: "closed"))) }
                let head = url.path == "/a"
                    ? Response(status: 302, headers: ["Location": "/b"], body: Data(), url: url)
                    : Response(status: 200, headers: [:], body: Data(), url: url)
                return StreamedResponse(head: head, body: ByteStream(Data()))
            }
        }
        let response = try await Exchange(transport: Chain(sends: sends)).send(.get |> url("https://api.test/a"))
        #expect(response.status == 200)
        #expect(sends.withLock { $0 } == ["/a", "/a", "/b", "/b"])
    }
}

/// The in-memory test kit answers a stubbed lost connection as CourierNIO answers one on a
/// connection it opened for the hop: not sent again, unless the stub says it was reused.
@Suite("InMemoryExecutor: a stubbed lost connection is a new connection's")
struct InMemoryLostConnectionTests {
    @Test func aLostConnectionStubIsSentOnceAsOnCourierNIO() async throws {
        let lost = CourierError(.transport(TransportFailure(.connectionLost, message: "reset")))
        let api = InMemoryExecutor.scripted([.failure(lost)], then: .status(200))
        let error = await #expect(throws: CourierError.self) { try await api.send(.get |> url("https://api.test/x")) }
        guard case .transport(let failure)? = error?.cause else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(failure.connectionWasReused == false)
        #expect(api.requests.count == 1)
    }

    @Test func aStubThatSaysItWasReusedGetsTheOneResend() async throws {
        var reused = TransportFailure(.connectionLost, message: "closed as it was reused")
        reused.connectionWasReused = true
        let api = InMemoryExecutor.scripted([.failure(CourierError(.transport(reused)))], then: .status(200))
        let response = try await api.send(.get |> url("https://api.test/x"))
        #expect(response.status == 200)
        #expect(api.requests.count == 2)
    }
}
