import CourierCore
import CourierResilience

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A canned answer for ``InMemoryExecutor``: a response or a transport failure, optionally delayed.
///
/// ```swift
/// let users = InMemoryExecutor(routes: [
///     .init(.get, "/v1/users", .json([User(id: 1, name: "Ada")], headers: ["ETag": #""v1""#])),
///     .init(.get, "/v1/users/9", .status(404, headers: [.contentType: "application/json"],
///                                      body: Data(#"{"error":"no such user"}"#.utf8))),
///     .init(.get, "/v1/slow", .text("slow").delayed(by: .seconds(2))),
///     .init(.get, "/v1/offline", .failure(CourierError(.transport(TransportFailure(.notConnected, message: "offline"))))),
/// ])
/// let list = try await users.send(.get |> url("https://api.test/v1/users") |> decode([User].self))
/// ```
public struct Stub: Sendable {
    /// What the stub produces.
    public enum Outcome: Sendable {
        /// Answer with this response.
        case response(Response)
        /// Fail with this error, as a transport would.
        case failure(any Error)
        /// Answer with a head, then a body in chunks (for ``Executor/stream(_:options:)``).
        case stream(Script)
    }

    /// A switch of protocols (``switching``): the `101`'s headers, made from the request, and
    /// the server's end of the connection.
    public struct Switch: Sendable {
        /// The headers of the `101`, for the request it answers.
        public var headers: @Sendable (Request) -> HTTPHeaders
        /// The server's side: runs in a task of its own once the `101` is sent; the connection
        /// closes when it returns.
        public var peer: @Sendable (UpgradedPeer) async -> Void

        /// Creates a switch.
        /// - Parameters:
        ///   - headers: The headers of the `101`, for the request it answers.
        ///   - peer: The server's side of the connection.
        public init(headers: @escaping @Sendable (Request) -> HTTPHeaders, peer: @escaping @Sendable (UpgradedPeer) async -> Void) {
            self.headers = headers
            self.peer = peer
        }
    }

    /// A streamed answer: the head, the chunks, the pause before each, and an optional fault.
    public struct Script: Sendable {
        /// The status, headers and URL (its body is ignored).
        public var head: Response
        /// The body, chunk by chunk.
        public var chunks: [Data]
        /// How long to wait before each chunk, on the executor's clock; `nil` for no wait.
        public var interval: Duration?
        /// The error the body fails with after the last chunk, if any.
        public var failure: (any Error)?

        /// Creates a script.
        /// - Parameters:
        ///   - head: The status, headers and URL.
        ///   - chunks: The body chunks.
        ///   - interval: The wait before each chunk.
        ///   - failure: The error after the last chunk.
        public init(head: Response, chunks: [Data], interval: Duration? = nil, failure: (any Error)? = nil) {
            self.head = head
            self.chunks = chunks
            self.interval = interval
            self.failure = failure
        }
    }

    /// What the stub produces.
    public var outcome: Outcome
    /// When set, the stub answers `101 Switching Protocols` with these headers and hands the
    /// connection to a peer (a WebSocket's server: ``Stub/webSocket(subprotocol:headers:compression:_:)``),
    /// if the call asked to switch (``StreamOptions/upgrade``); a call that did not gets the
    /// bare `101`, which the exchange refuses as a real server's would be. ``outcome`` is then
    /// not used. `nil` by default.
    public var switching: Switch?
    /// How long to wait before answering; the wait ends early with cancellation.
    public var delay: Duration?

    /// Creates a stub.
    /// - Parameters:
    ///   - outcome: The response or failure.
    ///   - delay: How long to wait first.
    public init(_ outcome: Outcome, delay: Duration? = nil) {
        self.outcome = outcome
        self.delay = delay
    }

    /// A response with any status, headers and body.
    /// - Parameters:
    ///   - status: The status code.
    ///   - headers: The headers.
    ///   - body: The body.
    /// - Returns: The stub.
    public static func status(_ status: Int, headers: HTTPHeaders = [:], body: Data = Data()) -> Stub {
        Stub(.response(Response(status: status, headers: headers, body: body)))
    }

    /// A JSON response with `Content-Type: application/json`. A value that fails to encode makes a
    /// stub that fails with the `EncodingError`.
    /// - Parameters:
    ///   - value: The body value.
    ///   - status: The status code; 200 by default.
    ///   - headers: Extra headers.
    ///   - encoder: The JSON encoder.
    /// - Returns: The stub.
    public static func json(
        _ value: some Encodable, status: Int = 200, headers: HTTPHeaders = [:], encoder: JSONEncoder = JSONEncoder()
    ) -> Stub {
        do {
            var headers = headers
            if !headers.contains(.contentType) { headers.set(.contentType, MediaType.json.rawValue) }
            return Stub(.response(Response(status: status, headers: headers, body: try encoder.encode(value))))
        } catch {
            return Stub(.failure(error))
        }
    }

    /// A UTF-8 text response.
    /// - Parameters:
    ///   - text: The body.
    ///   - status: The status code; 200 by default.
    ///   - contentType: The media type; `text/plain; charset=utf-8` by default.
    /// - Returns: The stub.
    public static func text(_ text: String, status: Int = 200, contentType: MediaType = .plainText) -> Stub {
        Stub(.response(Response(status: status, headers: [.contentType: contentType.rawValue], body: Data(text.utf8))))
    }

    /// A transport failure, for example `URLError(.timedOut)`.
    ///
    /// A lost connection (``TransportFailure/Kind/connectionLost``) is answered as on a connection
    /// opened for the request, as CourierNIO reports one: the exchange does not send the request
    /// again. To test the one resend a kept-alive connection gets, say the connection was reused:
    ///
    /// ```swift
    /// var lost = TransportFailure(.connectionLost, message: "closed as it was reused")
    /// lost.connectionWasReused = true
    /// let api = InMemoryExecutor.scripted([.failure(CourierError(.transport(lost)))], then: .status(200))
    /// ```
    /// - Parameter error: The error the executor throws.
    /// - Returns: The stub.
    public static func failure(_ error: any Error) -> Stub {
        Stub(.failure(error))
    }

    /// An answer that switches protocols: `101 Switching Protocols` with the headers
    /// `switching` makes from the request, then its peer on the connection (see ``switching``).
    /// - Parameter switching: The headers and the peer.
    /// - Returns: The stub.
    public static func switchingProtocols(_ switching: Switch) -> Stub {
        var stub = Stub(.response(Response(status: 101)))
        stub.switching = switching
        return stub
    }

    /// A streamed body: the head at once, then each chunk (after `interval`, when given).
    ///
    /// ```swift
    /// let ticking: Stub = .stream([Data("hel".utf8), Data("lo\n".utf8)], every: .milliseconds(10))
    /// ```
    /// - Parameters:
    ///   - chunks: The body, chunk by chunk.
    ///   - status: The status code; 200 by default.
    ///   - headers: The headers.
    ///   - interval: The wait before each chunk, on the executor's clock.
    /// - Returns: The stub.
    public static func stream(
        _ chunks: [Data], status: Int = 200, headers: HTTPHeaders = [:], every interval: Duration? = nil
    ) -> Stub {
        Stub(.stream(Script(head: Response(status: status, headers: headers), chunks: chunks, interval: interval)))
    }

    /// A `text/event-stream` body with one chunk per event.
    /// - Parameters:
    ///   - events: The events, in order.
    ///   - interval: The wait before each event.
    /// - Returns: The stub.
    public static func serverSentEvents(_ events: [ServerSentEvent], every interval: Duration? = nil) -> Stub {
        stream(
            events.map { Data($0.encoded.utf8) }, headers: [.contentType: MediaType.eventStream.rawValue, .cacheControl: "no-cache"],
            every: interval)
    }

    /// A JSON Lines body (`application/x-ndjson`) with one chunk per value. A value that fails to
    /// encode makes a stub that fails with the `EncodingError`.
    /// - Parameters:
    ///   - values: The values, one per line.
    ///   - interval: The wait before each line.
    ///   - encoder: The JSON encoder.
    /// - Returns: The stub.
    public static func ndjson<Value: Encodable>(
        _ values: [Value], every interval: Duration? = nil, encoder: JSONEncoder = JSONEncoder()
    ) -> Stub {
        do {
            let lines = try values.map { value -> Data in
                var line = try encoder.encode(value)
                line.append(0x0A)
                return line
            }
            return stream(lines, headers: [.contentType: "application/x-ndjson"], every: interval)
        } catch {
            return Stub(.failure(error))
        }
    }

    /// The same stub, its body cut after `count` bytes and then failing with `error` (by default
    /// a lost connection, ``TransportFailure/Kind/connectionLost``, as a transport reports one):
    /// a transfer that dies mid-body.
    /// - Parameters:
    ///   - count: How many body bytes arrive before the fault.
    ///   - error: The failure.
    /// - Returns: The faulty stub.
    public func failing(
        afterBytes count: Int,
        with error: any Error = CourierError(.transport(TransportFailure(.connectionLost, message: "the connection was lost")))
    ) -> Stub {
        var script: Script
        switch outcome {
        case .failure: return self
        case .response(let response): script = Script(head: response, chunks: [response.body])
        case .stream(let existing): script = existing
        }
        var kept: [Data] = []
        var remaining = max(0, count)
        for chunk in script.chunks where remaining > 0 {
            kept.append(chunk.prefix(remaining))
            remaining -= min(remaining, chunk.count)
        }
        script.chunks = kept
        script.failure = error
        var copy = self
        copy.outcome = .stream(script)
        return copy
    }

    /// The same stub, answered after `delay`.
    /// - Parameter delay: How long to wait.
    /// - Returns: The delayed stub.
    public func delayed(by delay: Duration) -> Stub {
        var copy = self
        copy.delay = delay
        return copy
    }
}
