/// A whole HTTP call over a ``Transport``: every hop of its redirect chain, each decided by one
/// ``RedirectPolicy``, with per-hop middleware around each hop. Written once, here, for every
/// transport.
///
/// **What happens to a request, in order.**
/// 1. Per-call ``middleware`` (``Executor/with(_:)``) sees the request once: retries, auth
///    refresh, logging of the call.
/// 2. The exchange sends the first hop: the request as the per-call middleware left it.
/// 3. Each hop runs through ``hopMiddleware`` (outermost first), then the transport. A hop
///    middleware sees the request of that hop exactly as it goes out, after the redirect policy
///    changed it (method, body, and credentials dropped once the chain left the origin), and the
///    hop's own response, redirects included.
///    A hop whose connection is lost before any answer is sent once more when the request may be
///    sent again (``Request/isRetryable``): a kept-alive connection the server closed as it was
///    reused costs the call nothing.
/// 4. While the transport sends a hop, the request's ``Request/timeout`` runs as an idle timer
///    on the exchange's clock: the longest wait for the head, upload bytes counting as activity.
/// 5. Each hop's head is settled (a status below 200 is a ``TransportFailure/Kind/badResponse``;
///    a body that is complete when the head arrives is handed on in hand).
/// 6. Each hop's body is held to the exchange's rules, as its bytes arrive: at most
///    ``maximumResponseSize`` bytes (``CourierError/Cause/responseTooLarge(limit:)``, the transfer
///    stopped), the framing check (a body shorter or longer than its `Content-Length` is a
///    ``TransportFailure/Kind/truncatedBody``), and the idle timer, which now waits for each
///    next chunk and does not run while bytes wait for a slow reader.
/// 7. A redirect the policy follows has its body drained (up to 64 KiB, so a connection can be
///    reused; a longer one is cut) and the next hop is sent; a refused one fails with
///    ``TransportFailure/Kind/redirectFailed``; any other response ends the call.
/// 8. An error is a ``CourierError`` with the caller's request attached (redacted), mapped once:
///    by the transport that knows what its failure means, or here, where the call ends.
///
/// A transport that gathers a body faster than it streams one is asked for it in hand
/// (``StreamOptions/buffersBody``) only when nothing has to watch it arrive: no size limit and
/// no timeout.
///
/// Every executor Courier ships holds one (``Executor/exchange``): ``URLSessionExecutor`` over
/// ``URLSessionTransport``, ``InMemoryExecutor`` over its stubs, ``HARReplayExecutor`` over a
/// recording, ``CallbackExecutor`` over a completion handler. An exchange over a transport of
/// your own is an executor too.
///
/// ```swift
/// let executor = URLSessionExecutor()
///     .eachHop(HopRecorder())        // every hop, redirects included
///     .with(LoggingMiddleware())     // once per call
/// ```
public struct Exchange: Executor {
    /// Sends each hop.
    public var transport: any Transport {
        didSet { gathersUnderRules = transport is any GathersUnderRules }
    }
    /// How redirects are followed.
    public var redirects: RedirectPolicy
    /// Middleware run once per call, outermost first (``Executor/with(_:)`` adds to it); see the
    /// order above.
    public var middleware: [any Middleware] {
        didSet { timed = Self.timed(recordsTimings, middleware, hopMiddleware) }
    }
    /// Middleware run around every hop, outermost first (``Executor/eachHop(_:)`` adds to it);
    /// see the order above.
    public var hopMiddleware: [any Middleware] {
        didSet { timed = Self.timed(recordsTimings, middleware, hopMiddleware) }
    }
    /// Whether every hop's transport records its ``HopTimings`` (read from
    /// ``StreamedResponse/timings``). Recording costs an allocation and a few clock readings per
    /// hop, so it is off unless asked for: set this, or add a ``HopTimingsObserver`` middleware
    /// (``HARRecorder``, CourierMetrics, CourierTracing), which turns it on for itself.
    /// `false` by default.
    public var recordsTimings = false {
        didSet { timed = Self.timed(recordsTimings, middleware, hopMiddleware) }
    }
    /// The most bytes a response body may have (counted as the transport hands them over, after
    /// decompression; error and redirect bodies included), or `nil` for no limit. Negative values
    /// count as `0`.
    public var maximumResponseSize: Int? {
        get { sizeLimit }
        set { sizeLimit = newValue.map { Swift.max(0, $0) } }
    }
    private var sizeLimit: Int?
    /// Which hop of its call a hop middleware (or the transport under it) runs for: `0` for the
    /// request as the per-call middleware sent it, `1` after the first redirect, and so on; `0`
    /// outside an exchange's hop. Logging and tracing add it to the retry attempt for
    /// `http.request.resend_count`.
    @TaskLocal public static var currentHop = 0
    /// Which attempt of its call the current task is making, as the innermost retry middleware
    /// (CourierResilience's `RetryMiddleware`) counts them: `1` for the first (and outside any
    /// retry), `2` for the first retry, and so on. Logging, metrics and tracing read it to tell
    /// attempts apart; a resend count is `currentAttempt - 1 + currentHop`.
    @TaskLocal public static var currentAttempt = 1

    /// Whether the transport gathers a buffered body under the rules (a cast made once, not per call).
    private var gathersUnderRules: Bool
    /// Whether hops record their timings: asked for, or read by a middleware (decided when the
    /// lists change, not per call).
    private var timed = false
    /// Watches the idle timers of this exchange's hops (and its copies'), on its clock.
    private let timers: IdleTimerQueue

    /// Creates an exchange.
    /// - Parameters:
    ///   - transport: Sends each hop.
    ///   - redirects: How redirects are followed; ``RedirectPolicy/follow`` by default.
    ///   - middleware: Middleware once per call, outermost first.
    ///   - hopMiddleware: Middleware around every hop, outermost first.
    ///   - maximumResponseSize: The most bytes a response body may have; `nil` (the default)
    ///     sets no limit.
    ///   - clock: The clock the ``Request/timeout`` runs on: `ContinuousClock` by default, a
    ///     ``ManualClock`` in tests.
    public init(
        transport: any Transport, redirects: RedirectPolicy = .follow, middleware: [any Middleware] = [],
        hopMiddleware: [any Middleware] = [], maximumResponseSize: Int? = nil,
        clock: some Clock<Duration> = ContinuousClock()
    ) {
        self.transport = transport
        self.gathersUnderRules = transport is any GathersUnderRules
        self.redirects = redirects
        self.middleware = middleware
        self.hopMiddleware = hopMiddleware
        self.sizeLimit = maximumResponseSize.map { Swift.max(0, $0) }
        self.timers = IdleTimerQueue(clock: clock)
        self.timed = Self.timed(false, middleware, hopMiddleware)
    }

    private static func timed(_ asked: Bool, _ middleware: [any Middleware], _ hopMiddleware: [any Middleware]) -> Bool {
        asked || middleware.contains { $0 is any HopTimingsObserver } || hopMiddleware.contains { $0 is any HopTimingsObserver }
    }

    /// This exchange itself: an exchange is the executor it configures.
    public var exchange: Exchange {
        get { self }
        set { self = newValue }
    }

    /// Runs `request` through the per-call middleware, then sends it and every redirect the
    /// policy follows; returns the last hop's response.
    /// - Parameters:
    ///   - request: The request.
    ///   - options: How the body is delivered; handed to every hop.
    /// - Returns: The head and body of the response that ends the call.
    /// - Throws: ``CourierError``, with `request` attached: what a middleware or the transport
    ///   threw that is not one already is mapped here, once (``CourierError/wrapping(_:request:)``).
    public func execute(_ request: Request, options: StreamOptions) async throws(CourierError) -> StreamedResponse {
        do {
            guard !middleware.isEmpty else { return try await call(request, options: options) }
            // A per-call middleware may change the request: its hops are validated here again.
            var options = options
            options.callIsValid = false
            return try await middleware.run(request) { [options] request in try await self.call(request, options: options) }
        } catch {
            // The one place an error of the call becomes a `CourierError`: a transport's own
            // failures arrive mapped (it knows what they mean), a timed hop's with its timings;
            // what a middleware or another transport threw is mapped now. Nothing above maps again.
            throw CourierError.wrapping(error, request: request)
        }
    }

    /// Sends `request` (as the per-call middleware left it) and every redirect the policy follows.
    private func call(_ request: Request, options: StreamOptions) async throws -> StreamedResponse {
        // Credentials in the URL (`https://user:password@host/`) go as Basic authentication, on
        // every transport alike; the userinfo never goes on the wire.
        let moved = try request.movingUserInfoToAuthorization()
        let request = moved ?? request
        // The request the front door validated, unchanged, needs no second look on its first
        // hop; a hop middleware may change it, and a redirect is a request of its own.
        let validAtDoor = options.callIsValid && moved == nil && hopMiddleware.isEmpty
        // Made at the first redirect: most calls have none.
        var chain: RedirectPolicy.Chain?
        var followed = 0
        var resent = false
        while true {
            let hop = chain?.current ?? request
            var options = options
            options.hopIsValid = validAtDoor && chain == nil
            let response: StreamedResponse
            do {
                if hopMiddleware.isEmpty || followed == Self.currentHop {
                    response = try await send(hop, throughMiddleware: options, call: request)
                } else {
                    response = try await Self.$currentHop.withValue(followed) { [options] in
                        try await send(hop, throughMiddleware: options, call: request)
                    }
                }
            } catch {
                if !resent, Self.mayResend(hop, after: error) {
                    resent = true
                    continue
                }
                throw error
            }
            resent = false
            guard redirects.follows, RedirectPolicy.isRedirect(response.status) else { return response }
            var state = chain ?? RedirectPolicy.Chain(request)
            switch redirects.next(status: response.status, location: response.headers[.location], chain: &state) {
            case .deliver:
                return response
            case .fail(let failure):
                response.body.cancel()
                throw CourierError(.transport(failure), request: request)
            case .follow:
                chain = state
                followed += 1
                await response.body.drain(upTo: 64 << 10)
                if Task.isCancelled { throw CourierError(.cancelled, request: request) }
            }
        }
    }

    /// Whether a hop that failed before its head may be sent once more: its connection was lost
    /// before any answer (a kept-alive connection the server closed as it was reused, the
    /// commonest case; not a connection opened for this hop, when the transport says so:
    /// ``TransportFailure/connectionWasReused``), the request may be sent again (an idempotent method, or
    /// ``Request/allowsRetry``, and a body that can be read again: ``Request/isRetryable``), and
    /// the call was not cancelled. RFC 9110 §9.2.2 allows a client to do this for idempotent
    /// requests; libcurl, and so URLSession, already does it for reused connections, so every
    /// transport now behaves alike. A hop the server said it did not process
    /// (``TransportFailure/requestWasNotProcessed``) is sent again whatever its method, when its
    /// body can be read again and ``Request/allowsRetry`` is not `false` (RFC 9113 §8.7).
    static func mayResend(_ hop: Request, after error: any Error) -> Bool {
        guard !Task.isCancelled, let error = error as? CourierError, case .transport(let failure) = error.cause, failure.kind == .connectionLost
        else { return false }
        // Not processed, the server said (RFC 9113 §8.7): safe to send again whatever the method.
        if failure.requestWasNotProcessed == true {
            return hop.allowsRetry != false && hop.bodySource?.isRepeatable != false
        }
        return hop.isRetryable && failure.connectionWasReused != false
    }

    /// One hop through the hop middleware, then the transport.
    private func send(_ hop: Request, throughMiddleware options: StreamOptions, call: Request) async throws -> StreamedResponse {
        guard !hopMiddleware.isEmpty else { return try await send(hop, options: options, call: call) }
        return try await hopMiddleware.run(hop) { hop in try await self.send(hop, options: options, call: call) }
    }

    /// One hop through the transport, under the hop's idle timer, its head settled and its body
    /// held to the rules. When hops are timed, a hop that fails carries what was measured up to
    /// the failure (``CourierError/timings``): the lookup, the connection, the handshake, the
    /// request written, as far as they got.
    private func send(_ hop: Request, options: StreamOptions, call: Request) async throws -> StreamedResponse {
        // The one validation of a hop the front door did not validate as it is, before any
        // transport sees it: an invalid hop is never sent, on every transport alike.
        var options = options
        if !options.hopIsValid {
            try hop.validate()
            options.hopIsValid = true
        }
        guard timed else { return try await send(hop, options: options, timings: nil, call: call) }
        let recorder = HopTimings.Recorder()
        do {
            return try await send(hop, options: options, timings: recorder, call: call)
        } catch {
            var failure = CourierError.wrapping(error, request: call)
            if failure.timings == nil { failure.timings = recorder.failed() }
            throw failure
        }
    }

    /// ``send(_:options:call:)``, with the hop's timings recorded by `timings` when it is given:
    /// one path for every hop, the idle timer armed when the request has a timeout.
    private func send(_ hop: Request, options: StreamOptions, timings: HopTimings.Recorder?, call: Request) async throws -> StreamedResponse {
        let timer = hop.effectiveTimeout.map { IdleTimer(timeout: .seconds($0), queue: timers) }
        var options = delivery(options, timer: timer, call: call)
        if let timings { options.timings = timings }
        if let timer, hop.body != nil || hop.bodySource != nil {
            // Upload bytes taken by the transport are activity.
            options.uploadProgress = TransferProgress(relayingTo: options.uploadProgress) { timer.touch() }
        }
        do {
            let response = try await transport(hop, options: options, timer: timer)
            if response.status == 101, let upgrade = options.upgrade {
                timer?.stop()
                return try switched(response, upgrade: upgrade, timings: options.timings)
            }
            return try held(
                try await response.settledIfNeeded(answering: hop.method), answering: hop.method, timer: timer, call: call,
                timings: options.timings)
        } catch {
            guard let timer else { throw error }
            timer.stop()
            if timer.fired && !Task.isCancelled { throw CourierError.timedOut(.init(.idle, limit: timer.timeout), request: call) }
            throw error
        }
    }

    /// The transport's answer to `hop`. Sent directly when no timer watches the hop, or when the
    /// transport gathers the body under the rules (its stream is armed with the timer from the
    /// start, and the timer stops the transfer by stopping that stream: no task of its own);
    /// otherwise the hop runs as a task of its own, which the timer cancels (preferring the task
    /// executor its caller prefers, so a call from an event loop stays on it).
    private func transport(_ hop: Request, options: StreamOptions, timer: IdleTimer?) async throws -> StreamedResponse {
        guard let timer, !options.buffersBody else { return try await transport.send(hop: hop, options: options) }
        let work = Task.inheritingPreference { [transport] in try await transport.send(hop: hop, options: options) }
        timer.start { work.cancel() }
        return try await withTaskCancellationHandler {
            try await work.value
        } onCancel: {
            work.cancel()
        }
    }

    /// How a hop's body is delivered: the one place buffering is decided. A caller that reads
    /// the body whole (``StreamOptions/buffersBody``) gets it in hand from the transport when
    /// nothing has to watch it arrive (no size limit, no idle timer), or when the transport
    /// gathers it under the rules (``StreamOptions/rules``: the limit and the timer watch it from
    /// its first byte); any other transport streams it, so that the rules can watch each chunk.
    private func delivery(_ options: StreamOptions, timer: IdleTimer?, call: Request) -> StreamOptions {
        guard options.buffersBody, sizeLimit != nil || timer != nil else { return options }
        var options = options
        if gathersUnderRules {
            options.rules = BodyRules(maximumSize: sizeLimit, timer: timer, request: call, pausesForReader: false)
        } else {
            options.buffersBody = false
        }
        return options
    }

    /// A `101` that answers a hop asking to switch protocols (``StreamOptions/upgrade``): handed
    /// on as it is when the transport handed over the connection (its body is the new protocol's
    /// bytes, held to no body rules), a ``TransportFailure/Kind/badResponse`` otherwise.
    private func switched(_ response: StreamedResponse, upgrade: HTTPUpgrade, timings: HopTimings.Recorder?) throws -> StreamedResponse {
        guard upgrade.connection != nil else {
            response.body.cancel()
            throw CourierError(
                .transport(
                    TransportFailure(
                        .badResponse, message: "the server switched protocols (101) but the transport handed over no connection")))
        }
        var response = response
        if let timings {
            timings.mark(.firstByte)
            response.recorder = timings
        }
        return response
    }

    /// `response` with its body held to the exchange's rules (see the order above): checked now
    /// when it is in hand, as its bytes arrive otherwise; and with the hop's timings, when they
    /// are recorded (the head marked, and a body in hand ended, where the transport did not).
    private func held(
        _ response: StreamedResponse, answering method: HTTPMethod, timer: IdleTimer?, call: Request, timings: HopTimings.Recorder?
    ) throws -> StreamedResponse {
        var response = response
        if let timings {
            timings.mark(.firstByte)
            if response.body.inHand != nil { timings.mark(.bodyEnded) }
            response.recorder = timings
        }
        let expectedLength = response.head.framedLength(answering: method)
        // Made only where they are used (an error, a stream to watch): a body in hand within its
        // limits, the usual answer, needs none.
        func rules() -> BodyRules {
            var rules = BodyRules(maximumSize: sizeLimit, expectedLength: expectedLength, timer: timer, request: call)
            if sizeLimit != nil { rules.head = response.head }
            return rules
        }
        if let data = response.body.inHand {
            timer?.stop()
            if let limit = sizeLimit, data.count > limit { throw rules().tooLarge }
            if let expectedLength, expectedLength != data.count, let failure = rules().framingError(received: data.count) { throw failure }
        } else if sizeLimit != nil || expectedLength != nil || timer != nil {
            response.body.enforce(rules())
        }
        return response
    }
}

extension ByteStream {
    /// Reads and drops the body, up to `limit` bytes; a longer one is cut (stopping its
    /// transfer). Errors end the draining: nothing waits for this body.
    func drain(upTo limit: Int) async {
        guard bufferedData == nil else { return }
        var read = 0
        var iterator = makeAsyncIterator()
        do {
            while let chunk = try await iterator.next() {
                read += chunk.count
                if read > limit { break }
            }
        } catch {
            return
        }
        if read > limit { cancel() }
    }
}
