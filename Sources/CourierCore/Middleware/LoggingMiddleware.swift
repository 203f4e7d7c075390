#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Reports each request, response and failure to a sink, with secrets redacted.
///
/// Events carry a redacted copy of the request: `Authorization`, `Proxy-Authorization`, `Cookie`
/// and `Set-Cookie` (in any letter case), the request's own sensitive names and the names given
/// to this middleware, sensitive query values (`token`, `api_key`, `password`, …) and URL
/// userinfo never reach the sink. Response headers are redacted the same way.
///
/// Bodies are off by default. With ``BodyLogging/on(maxBytes:)`` text bodies are included up to
/// the cap, with secret-looking JSON and form fields hidden, and binary bodies are summarised by
/// size and type.
///
/// ```swift
/// let executor = URLSessionExecutor().with(LoggingMiddleware { event in logger.debug("\(event)") })
/// // → GET https://api.example.com/v1/users?token=<redacted>
/// // ← 200 GET https://api.example.com/v1/users?token=<redacted> (12 ms, 341 bytes)
/// ```
public struct LoggingMiddleware: Middleware {
    /// One thing worth logging.
    public struct Event: Sendable, CustomStringConvertible {
        /// What happened.
        #if hasAttribute(nonexhaustive)
            @nonexhaustive
        #endif
        public enum Kind: Sendable, Hashable {
            /// A request is about to be sent.
            case request
            /// A response arrived.
            case response
            /// The request failed without a response.
            case failure
            /// A streamed body ended (see ``Executor/stream(_:options:)``): read whole, left
            /// unread by its reader, or failed with ``Event/error`` (``Event/ending`` says which).
            /// ``Event/streamedBytes`` says how much the reader took.
            case streamEnded
            /// A resilience middleware inside this one decided something for the request
            /// (``Event/resilience`` says what): a breaker opened or refused it, a retry budget
            /// ran out, a hedge was sent or won, a rate limit made it wait, a fault was injected.
            case resilience
        }

        /// What happened.
        public var kind: Kind
        /// The request, redacted.
        public var request: Request
        /// The response, for ``Kind/response``.
        public var response: Response?
        /// The error, for ``Kind/failure``.
        public var error: CourierError?
        /// Time from sending to the response or failure.
        public var duration: Duration?
        /// The response headers, redacted, for ``Kind/response``: those of ``response``, converted
        /// from Foundation's only when read. Setting them sets ``response``'s headers.
        public var responseHeaders: HTTPHeaders? {
            get { response?.headers }
            set { response?.headers = newValue ?? HTTPHeaders() }
        }
        /// The request body as logged (capped, redacted, or a summary), when bodies are on.
        public var requestBody: String?
        /// The response body as logged (capped, redacted, or a summary), when bodies are on. For
        /// a stream, the start of the body, in the ``Kind/streamEnded`` event.
        public var responseBody: String?
        /// For ``Kind/resilience``: what was decided.
        public var resilience: ResilienceEvent?
        /// For ``Kind/streamEnded``: the body bytes the reader took.
        public var streamedBytes: Int?
        /// For ``Kind/streamEnded``: how reading the body ended. A body its reader stopped
        /// reading, or dropped unread, is ``ByteStream/Ending/abandoned``: not a failure, and
        /// ``error`` stays `nil`.
        public var ending: ByteStream.Ending?
        /// For ``Kind/response``: whether the body streams (it is not in ``response``; a
        /// ``Kind/streamEnded`` event follows when it ends). A body complete with the head (a
        /// `204`, a `HEAD`, `Content-Length: 0`) is in hand, never streamed.
        public var isStreamed = false
        /// Which attempt this is, when the logging runs inside a ``RetryMiddleware``
        /// (``Exchange/currentAttempt``): `1` for the first.
        public var attempt = 1
        /// Which hop of its call this is, when the logging runs per hop (``Exchange/eachHop(_:)``,
        /// ``Exchange/currentHop``): `0` for the request as sent, `1` after the first redirect.
        public var hop = 0

        /// How many times the request was sent again before this one, for any reason
        /// (`http.request.resend_count`): the retries before this attempt and the redirects
        /// followed before this hop within it.
        public var resendCount: Int { attempt - 1 + hop }

        /// Whether the failure is one expected on real networks (timeouts, lost connections,
        /// cancellation), as opposed to a bug or a misconfiguration.
        public var isTransient: Bool {
            guard let error else { return false }
            if case .cancelled = error.cause { return true }
            return error.isTransient
        }

        /// A one-line summary without secrets.
        public var description: String {
            let line = "\(request.method.rawValue) \(request.urlString(redacting: request.redaction) ?? "(no URL)")"
            let elapsed = duration.map { " (\(Self.milliseconds($0)) ms" } ?? " ("
            switch kind {
            case .request:
                return "→ \(line)"
            case .response:
                let status = response?.status ?? 0
                guard !isStreamed else { return "← \(status) \(line)\(elapsed), body streaming)" }
                return "← \(status) \(line)\(elapsed), \(response?.body.count ?? 0) bytes)"
            case .failure:
                let reason = error?.summary ?? "unknown"
                // What was measured of the hop up to the failure, when hops are timed.
                let measured = error?.timings.map { "; the hop: \($0)" } ?? ""
                return "✕ \(line)\(elapsed)) failed: \(reason)\(measured)"
            case .streamEnded:
                let bytes = streamedBytes ?? 0
                if let error { return "✕ \(line)\(elapsed)) stream ended after \(bytes) bytes: \(error.summary)" }
                if case .abandoned? = ending {
                    let read = bytes == 0 ? "body not read" : "\(bytes) bytes read, the rest of the body not read"
                    return "⇣ \(line)\(elapsed), \(read))"
                }
                return "⇣ \(line)\(elapsed), \(bytes) bytes streamed)"
            case .resilience:
                return "⚑ \(line): \(resilience?.description ?? "resilience event")"
            }
        }

        private static func milliseconds(_ duration: Duration) -> Int64 {
            duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        }
    }

    /// Whether bodies are logged.
    public enum BodyLogging: Sendable, Hashable {
        /// Bodies are not logged.
        case off
        /// Text bodies are logged up to `maxBytes`; binary bodies are summarised.
        case on(maxBytes: Int)
    }

    /// Receives events; must be safe to call from any thread.
    public typealias Sink = @Sendable (Event) -> Void

    private let sink: Sink
    private let redaction: Redaction
    private let bodies: BodyLogging

    /// Creates the middleware.
    /// - Parameters:
    ///   - redaction: More header and query names to hide, on top of each request's own.
    ///   - bodies: Whether bodies are logged; off by default.
    ///   - sink: Receives events; prints their descriptions by default.
    public init(redaction: Redaction = Redaction(), bodies: BodyLogging = .off, sink: @escaping Sink = { print($0) }) {
        self.redaction = redaction
        self.bodies = bodies
        self.sink = sink
    }

    /// The body as logged, or `nil` when bodies are off or it is empty.
    ///
    /// Only the start of the body that can be shown is looked at: the cap plus
    /// ``redactionMargin`` bytes, whatever the body's size, so logging costs what is logged.
    /// Secrets are hidden in that window before it is cut to the cap (a secret that straddles
    /// the cap is recognised whole and hidden), and a window that ends inside a secret hides
    /// what it holds of it. Whether the body is text or binary is judged on the window too.
    /// - Parameters:
    ///   - request: The request of the exchange: a binary body's media type is shown unless it
    ///     echoes one of its secrets.
    ///   - total: The body's whole size when `body` is only its start (a stream).
    private func logged(_ body: Data, type: String?, redactor: BodyRedactor?, request: Request, total: Int? = nil) -> String? {
        guard case .on(let maxBytes) = bodies, let redactor, !body.isEmpty else { return nil }
        let total = total ?? body.count
        let cap = max(0, maxBytes)
        let window = body.prefix(Self.window(forCap: cap))
        guard let text = Self.text(window), !text.contains("\0") else {
            return "<\(total) bytes of binary data\(type.map { " (\(SecretEchoes(request: request, extra: redaction).shown($0)))" } ?? "")>"
        }
        let cut = total > window.count
        let redacted = redactor.redact(text, truncated: cut)
        guard redacted.utf8.count > cap || cut else { return redacted }
        let shown = String(decoding: redacted.utf8.prefix(cap), as: UTF8.self)
        return redactor.redact(shown, truncated: true) + "… (\(total) bytes in all)"
    }

    /// The body as UTF-8 text, allowing a character cut at the end (the start of a stream).
    private static func text(_ body: Data) -> String? {
        for cut in 0...min(3, body.count) {
            if let text = String(data: body.dropLast(cut), encoding: .utf8) { return text }
        }
        return nil
    }

    /// How many bytes past the log cap a streamed body's start is kept, so that a secret that
    /// straddles the cap is still recognised (and hidden) before the text is cut.
    static let redactionMargin = 4096

    /// How much of a body is looked at for a log cap of `cap` bytes: the cap and the margin
    /// (saturating: `.on(maxBytes: .max)` means the whole body).
    static func window(forCap cap: Int) -> Int {
        let (sum, overflow) = cap.addingReportingOverflow(redactionMargin)
        return overflow ? Int.max : sum
    }

    /// What one logged exchange keeps between its events: the redacted request, the redaction
    /// in force, the body redactor (only when bodies are logged) and when it started.
    private struct Exchange: Sendable {
        let redacted: Request
        let redaction: Redaction
        let redactor: BodyRedactor?
        let clock = ContinuousClock()
        let start: ContinuousClock.Instant
        /// The retry attempt this exchange is (``Exchange/currentAttempt``).
        let attempt = CourierCore.Exchange.currentAttempt
        /// The hop of its call, when logging runs per hop.
        let hop = CourierCore.Exchange.currentHop

        /// An event of `kind` timed from the start, with the (already redacted) response head.
        func event(_ kind: Event.Kind, head: Response? = nil) -> Event {
            var event = Event(kind: kind, request: redacted, duration: clock.now - start)
            event.response = head
            event.attempt = attempt
            event.hop = hop
            return event
        }

        /// `response` as logged: header values that are sensitive, or that echo one of
        /// `request`'s secrets, hidden (converted and searched only if the sink reads them).
        func shown(_ response: Response, of request: Request) -> Response {
            response.hidingEchoes(of: request, extra: redaction, redacting: redaction)
        }

        /// The failure event for `error`.
        func failure(_ error: any Error, request: Request) -> Event {
            var event = Event(kind: .failure, request: redacted, error: CourierError.wrapping(error, request: request), duration: clock.now - start)
            event.attempt = attempt
            event.hop = hop
            return event
        }
    }

    /// Logs `request` (redacted) and starts the clock.
    private func begin(_ request: Request) -> Exchange {
        var policy = request
        policy.redaction = request.redaction.merging(redaction)
        // Only when bodies are logged: collecting the request's secrets is work the common
        // (bodies off) path does not need.
        let redactor: BodyRedactor? = bodies == .off ? nil : BodyRedactor(request: request, extra: redaction)
        let exchange = Exchange(
            redacted: policy.redacted(), redaction: policy.redaction, redactor: redactor, start: ContinuousClock().now)
        var sent = Event(kind: .request, request: exchange.redacted)
        sent.attempt = exchange.attempt
        sent.hop = exchange.hop
        sent.requestBody = request.body.flatMap { logged($0, type: request.headers[.contentType], redactor: redactor, request: request) }
        sink(sent)
        return exchange
    }

    /// Logs the request, sends it on, and logs the response or failure. A body in hand is
    /// logged with the response; for a streamed body, a ``Event/Kind/streamEnded`` event follows
    /// when it ends, with the byte count and (when bodies are logged) the start of the body, up to
    /// the cap: the body is never held whole.
    /// - Parameters:
    ///   - request: The request.
    ///   - next: The rest of the chain.
    /// - Returns: The response, unchanged (a streamed body observed).
    /// - Throws: Whatever `next` throws, unchanged.
    public func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
        let exchange = begin(request)
        let streamed: StreamedResponse
        let sink = self.sink
        do {
            // The decisions of the resilience middleware inside this one, logged with the call.
            streamed = try await ResilienceEvent.observing({ decided in
                var event = exchange.event(.resilience)
                event.resilience = decided
                sink(event)
            }) { try await next(request) }
        } catch {
            sink(exchange.failure(error, request: request))
            throw error
        }
        if let body = streamed.body.bufferedData {
            // Headers Foundation delivered are converted (and redacted) only if the sink reads them.
            var whole = streamed.head
            whole.body = body
            var received = exchange.event(.response, head: exchange.shown(whole, of: request))
            if case .on = bodies {
                received.responseBody = logged(body, type: streamed.headers[.contentType], redactor: exchange.redactor, request: request)
            }
            sink(received)
            return streamed
        }
        let head = exchange.shown(streamed.head, of: request)
        var received = exchange.event(.response, head: head)
        received.isStreamed = true
        sink(received)
        let shownHead = head
        let cap: Int
        if case .on(let maxBytes) = bodies { cap = Self.window(forCap: max(0, maxBytes)) } else { cap = 0 }
        let seen = Locked((count: 0, start: Data()))
        let type = streamed.headers[.contentType]
        let logBody: @Sendable (Data, Int) -> String? = { [self] body, total in
            logged(body, type: type, redactor: exchange.redactor, request: request, total: total)
        }
        var observed = streamed
        observed.body = streamed.body.observing(
            chunk: { chunk in
                seen.withLock { seen in
                    seen.count += chunk.count
                    if seen.start.count < cap { seen.start.append(chunk.prefix(cap - seen.start.count)) }
                }
            },
            end: { ending in
                let (count, bodyStart) = seen.withLock { ($0.count, $0.start) }
                var ended = exchange.event(.streamEnded, head: shownHead)
                ended.streamedBytes = count
                if case .failed(let error) = ending {
                    let wrapped = CourierError.wrapping(error, request: request)
                    ended.error = wrapped
                    ended.ending = .failed(wrapped)
                } else {
                    ended.ending = ending
                }
                ended.responseBody = logBody(bodyStart, count)
                sink(ended)
            })
        return observed
    }
}
