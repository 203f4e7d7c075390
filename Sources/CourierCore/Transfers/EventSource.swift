#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A reconnecting server-sent events client: the events of a `text/event-stream` resource,
/// across as many connections as it takes, as one `AsyncSequence`.
///
/// Following the WHATWG EventSource model:
/// - each connection sends `Accept: text/event-stream`, `Cache-Control: no-cache` and, once an
///   event carried an `id`, `Last-Event-ID`, so the server can resume; an id that cannot be a
///   header value (one with a control character) is kept on the events but not sent;
/// - when a connection ends or drops, it reconnects after the server's `retry` delay (or
///   ``ReconnectPolicy/initialDelay``), never sooner than ``ReconnectPolicy/minimumDelay``,
///   doubling the wait after each attempt that brings no event, up to
///   ``ReconnectPolicy/maximumDelay``;
/// - it stops, ending the sequence, on `204 No Content`; it stops with
///   ``CourierError/Cause/unacceptableStatus(_:errorBody:)`` on any other status than 200, with
///   ``CourierError/Cause/unacceptableContentType(expected:received:)`` when the content type is
///   not `text/event-stream`, and with ``CourierError/Cause/cancelled`` when the reading task is
///   cancelled (which also stops the transfer).
///
/// Middleware applies to each connection (authentication, logging, limits).
///
/// ```swift
/// let source = EventSource(.get |> url("https://api.example.com/v1/updates") |> bearer(token), executor: executor)
/// for try await event in source where event.event == "update" {
///     handle(try event.decode(Update.self))
/// }
/// ```
public struct EventSource: AsyncSequence, Sendable {
    /// An event.
    public typealias Element = ServerSentEvent
    /// Errors thrown while reading.
    public typealias Failure = CourierError

    /// When and how often to reconnect.
    public struct ReconnectPolicy: Sendable, Hashable {
        /// The wait before reconnecting when the server has not set one with `retry`.
        public var initialDelay: Duration
        /// The longest wait between attempts.
        public var maximumDelay: Duration
        /// How many reconnections in a row may bring no event before the last error is thrown;
        /// `nil` for no limit.
        public var maximumAttempts: Int?
        /// The shortest wait between connections, whatever the server's `retry` says: a server
        /// that sends `retry: 0` and closes every connection at once cannot make the client
        /// reconnect in a loop.
        public var minimumDelay: Duration

        /// Creates a policy.
        /// - Parameters:
        ///   - initialDelay: The wait when the server set none; 3 seconds by default.
        ///   - maximumDelay: The longest wait; 60 seconds by default.
        ///   - maximumAttempts: Reconnections in a row without an event before giving up.
        ///   - minimumDelay: The shortest wait, whatever the server says; 100 ms by default.
        public init(
            initialDelay: Duration = .seconds(3), maximumDelay: Duration = .seconds(60), maximumAttempts: Int? = nil,
            minimumDelay: Duration = .milliseconds(100)
        ) {
            self.minimumDelay = Swift.max(.zero, minimumDelay)
            self.initialDelay = Swift.max(self.minimumDelay, initialDelay)
            self.maximumDelay = Swift.max(self.initialDelay, maximumDelay)
            self.maximumAttempts = maximumAttempts.map { Swift.max(0, $0) }
        }

        /// The wait before reconnection attempt `attempt` (1 for the first since an event
        /// arrived): the server's `retry` (or ``initialDelay``), at least ``minimumDelay``,
        /// doubled for each attempt after the first (connections that bring no event), at most
        /// ``maximumDelay``. A connection that delivered an event starts the count again.
        /// - Parameters:
        ///   - attempt: The attempt, from 1.
        ///   - serverRetry: The server's `retry` in milliseconds, if it sent one.
        /// - Returns: The wait.
        public func delay(beforeAttempt attempt: Int, serverRetry: Int?) -> Duration {
            let asked = serverRetry.map { Duration.milliseconds(Swift.min(Swift.max(0, $0), 86_400_000)) } ?? initialDelay
            var base = Swift.max(minimumDelay, asked)
            if base == .zero { return .zero }
            for _ in 1..<Swift.max(1, Swift.min(attempt, 32)) {
                base = base * 2
                if base >= maximumDelay { return maximumDelay }
            }
            return Swift.min(base, maximumDelay)
        }
    }

    let request: Request
    let executor: any Executor
    let policy: ReconnectPolicy
    let options: StreamOptions
    let sleep: @Sendable (Duration) async throws -> Void

    /// Creates a client; nothing is sent until the sequence is iterated.
    /// - Parameters:
    ///   - request: The request; the event-stream headers are added to it.
    ///   - executor: The executor each connection goes through.
    ///   - policy: When to reconnect.
    ///   - options: The buffer limits of each connection.
    ///   - clock: The clock reconnection waits use (a ``ManualClock`` in tests).
    public init<C: Clock>(
        _ request: Request, executor: any Executor, policy: ReconnectPolicy = ReconnectPolicy(),
        options: StreamOptions = StreamOptions(), clock: C = ContinuousClock()
    ) where C.Duration == Duration {
        self.request = request
        self.executor = executor
        self.policy = policy
        self.options = options
        self.sleep = { try await CourierCore.sleep(on: clock, for: $0, as: .reconnect) }
    }

    /// Creates the iterator; each iteration makes its own connections.
    public func makeAsyncIterator() -> Iterator { Iterator(source: self) }

    /// Reads events, reconnecting as needed.
    public struct Iterator: AsyncIteratorProtocol {
        let source: EventSource
        /// The parser between connections: it keeps the last event id and the server's retry.
        var parser = ServerSentEventParser()
        /// The events of the current connection.
        var events: ParsingIterator<ServerSentEventParser>?
        /// Connections in a row that brought no event.
        var failures = 0
        var lastError: CourierError?
        var finished = false
        var connected = false

        /// The next event, or `nil` once the server said to stop (204).
        /// - Throws: ``CourierError``: an unacceptable status or content type, cancellation, or
        ///   the last error after ``ReconnectPolicy/maximumAttempts``.
        public mutating func next() async throws(CourierError) -> ServerSentEvent? {
            try await next(isolation: nil)
        }

        /// The next event, read without leaving `actor` between connections (see
        /// ``ByteStream/Iterator/next(isolation:)``).
        /// - Parameter actor: The actor the reader runs on, if any.
        /// - Throws: As ``next()``.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(CourierError) -> ServerSentEvent? {
            while !finished {
                guard var connection = events else {
                    try await connect(isolation: actor)
                    continue
                }
                // Held in one place while it reads, so that its buffers are not copied.
                events = nil
                do {
                    if let event = try await connection.next(isolation: actor) {
                        events = connection
                        failures = 0
                        return event
                    }
                    // The connection ended: keep what the parser learnt, and reconnect.
                    parser = connection.parser
                } catch {
                    let error = CourierError.wrapping(error, request: source.request)
                    if case .cancelled = error.cause { throw error }
                    if case .decodingFailed = error.cause { throw error }
                    // A dropped connection: reconnect, resuming after the last complete event.
                    lastError = error
                    var ended = connection.parser
                    ended.finish()
                    parser = ended
                }
            }
            return nil
        }

        private mutating func connect(isolation actor: isolated (any Actor)?) async throws(CourierError) {
            if connected {
                failures += 1
                if let maximum = source.policy.maximumAttempts, failures > maximum {
                    throw lastError ?? CourierError(.transport(TransportFailure(.connectionLost, message: "the event stream kept ending without events")), request: source.request)
                }
                let delay = Swift.min(
                    source.policy.delay(beforeAttempt: failures, serverRetry: parser.retry), .seconds(Request.maximumInterval))
                do {
                    try await source.sleep(delay)
                } catch {
                    throw CourierError(.cancelled, request: source.request)
                }
            }
            connected = true
            var request = source.request |> header(.accept, "text/event-stream") |> header(.cacheControl, "no-cache")
            // An id that cannot be a header value (a server's control characters) is not sent:
            // the stream goes on, resuming as a server that never sent an id would have it.
            if !parser.lastEventID.isEmpty, HTTPSyntax.headerValueDefect(parser.lastEventID) == nil {
                request = request |> header(.lastEventID, parser.lastEventID)
            }
            let response: StreamedResponse
            do {
                response = try await source.executor.stream(request, options: source.options)
            } catch {
                switch error.cause {
                case .timedOut, .transport:
                    lastError = error
                    return  // reconnect
                default:
                    throw error
                }
            }
            if response.status == 204 {
                response.body.cancel()
                finished = true
                return
            }
            guard response.status == 200 else {
                let start = try? await response.body.collect(upTo: 64 << 10)
                throw CourierError(
                    .unacceptableStatus(response.status, errorBody: nil), request: request,
                    response: Response(status: response.status, headers: response.headers, body: start ?? Data(), url: response.url))
            }
            guard let type = response.contentType, type.matches(.eventStream) else {
                response.body.cancel()
                throw CourierError(
                    .unacceptableContentType(expected: [.eventStream], received: response.contentType),
                    request: request, response: response.head)
            }
            let retry = parser.retry
            parser = ServerSentEventParser(lastEventID: parser.lastEventID, retry: retry)
            events = ParsingIterator(response.body.makeAsyncIterator(), parser: parser)
        }
    }
}

extension EventSource: CustomStringConvertible, CustomReflectable {
    /// `EventSource(GET <redacted URL>)`.
    public var description: String {
        "EventSource(\(request.method.rawValue) \(request.urlString(redacting: request.redaction) ?? "(no URL)"))"
    }

    /// The redacted request only.
    public var customMirror: Mirror { Mirror(self, children: ["request": request]) }
}
