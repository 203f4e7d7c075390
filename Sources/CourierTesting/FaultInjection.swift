import CourierCore
import CourierResilience

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Injects latency, errors, failing statuses and cut-off bodies into any executor, by rule or
/// from a recorded outage, so that a team can rehearse an outage in a unit test: the "chaos"
/// strategy of Polly, for Courier's middleware.
///
/// Each ``Rule`` matches requests (all by default) and fires with a probability (always by
/// default, drawn from a ``RandomSource`` you can seed). Rules are tried in order for every
/// request: latencies add up; the first answer (a status, a failure, a timeout) ends the request
/// without sending it; a truncation lets the request go and cuts its response body after so
/// many bytes, failing it as ``TransportFailure/Kind/truncatedBody``. Each fault is a
/// ``ResilienceEvent/Kind/faultInjected`` event.
///
/// ```swift
/// let clock = ManualClock()
/// let chaos = FaultInjection(
///     [
///         .init(.latency(.seconds(2)), probability: 0.1),
///         .init(.status(503), probability: 0.05, when: { $0.method == .get }),
///     ],
///     random: .seeded(42), clock: clock)
/// let api = InMemoryExecutor.scripted([], then: .status(200)).with(RetryMiddleware(clock: clock), chaos)
/// ```
///
/// ``replaying(_:clock:)`` plays a recorded HAR's outage instead: its statuses, failures and
/// latencies, in order, one per request.
public struct FaultInjection: Middleware {
    /// One thing to do to a request.
    public struct Fault: Sendable, CustomStringConvertible {
        enum Action: Sendable {
            case latency(Duration)
            case answer(Stub, String)
            case truncate(Int)
        }
        let action: Action

        /// Waits this long before the request goes (or the next fault applies).
        /// - Parameter delay: The wait, clamped to zero … a year.
        /// - Returns: The fault.
        public static func latency(_ delay: Duration) -> Fault {
            Fault(action: .latency(AttemptTimeoutMiddleware.clamped(delay)))
        }

        /// Answers with this stub without sending the request (a status, a failure, a body that
        /// fails part way: anything a ``Stub`` says).
        /// - Parameter stub: The answer.
        /// - Returns: The fault.
        public static func answer(_ stub: Stub) -> Fault {
            let detail: String
            switch stub.outcome {
            case .response(let response): detail = "status \(response.status)"
            case .stream(let script): detail = "status \(script.head.status), streamed"
            case .failure: detail = stub.switching == nil ? "failure" : "switching protocols"
            }
            return Fault(action: .answer(stub, detail))
        }

        /// Answers with a status (a `503`, a `429` with `Retry-After`) without sending the request.
        /// - Parameters:
        ///   - status: The status.
        ///   - headers: The response headers.
        /// - Returns: The fault.
        public static func status(_ status: Int, headers: HTTPHeaders = [:]) -> Fault {
            answer(.status(status, headers: headers))
        }

        /// Fails the request with a transport failure of this kind (transient ones are retried).
        /// - Parameter kind: The kind: `.connectionLost`, `.cannotConnect`, `.dnsFailure`, …
        /// - Returns: The fault.
        public static func failure(_ kind: TransportFailure.Kind) -> Fault {
            let failure = CourierError(.transport(TransportFailure(kind, message: "injected fault")))
            return Fault(action: .answer(.failure(failure), "failure \(failure.errorType)"))
        }

        /// Fails the request as a timeout, without sending it.
        public static var timeout: Fault {
            Fault(action: .answer(.failure(CourierError.timedOut(.init(.injected, limit: nil), request: nil)), "timeout"))
        }

        /// Sends the request and cuts its response body after `bytes` bytes, failing it as
        /// ``TransportFailure/Kind/truncatedBody``.
        /// - Parameter bytes: The bytes let through (0 or more).
        /// - Returns: The fault.
        public static func truncatedBody(afterBytes bytes: Int) -> Fault {
            Fault(action: .truncate(Swift.max(0, bytes)))
        }

        /// For example `latency 2.0 s`, `status 503` or `body cut after 100 bytes`.
        public var description: String {
            switch action {
            case .latency(let delay): "latency \(delay.seconds) s"
            case .answer(_, let detail): detail
            case .truncate(let bytes): "body cut after \(bytes) bytes"
            }
        }
    }

    /// A fault, the requests it applies to, and how often.
    public struct Rule: Sendable {
        /// The fault.
        public var fault: Fault
        /// The chance it fires for a matching request, `0...1` (clamped; non-finite counts as 0).
        public var probability: Double
        /// Which requests it applies to.
        public var matches: @Sendable (Request) -> Bool

        /// Creates a rule.
        /// - Parameters:
        ///   - fault: The fault.
        ///   - probability: The chance it fires; always by default.
        ///   - matches: Which requests; all by default.
        public init(_ fault: Fault, probability: Double = 1, when matches: @escaping @Sendable (Request) -> Bool = { _ in true }) {
            self.fault = fault
            self.probability = probability.isFinite ? Swift.min(1, Swift.max(0, probability)) : 0
            self.matches = matches
        }
    }

    private enum Source: Sendable {
        case rules([Rule])
        case timeline([[Fault]], Locked<Int>)
    }

    private let source: Source
    private let random: RandomSource
    private let clock: ElapsedClock
    private let sleep: @Sendable (Duration) async throws -> Void
    private let answer: @Sendable (Stub, Request) async throws -> StreamedResponse

    /// Creates the middleware.
    /// - Parameters:
    ///   - rules: The rules, tried in order for each request.
    ///   - random: The source the probabilities are drawn from; seed it in tests.
    ///   - clock: The clock latencies run on: a ``ManualClock`` in tests.
    public init(_ rules: [Rule], random: RandomSource = .system, clock: some Clock<Duration> = ContinuousClock()) {
        self.init(source: .rules(rules), random: random, clock: clock)
    }

    private init(source: Source, random: RandomSource, clock: some Clock<Duration>) {
        self.source = source
        self.random = random
        self.clock = ElapsedClock(clock)
        self.sleep = { delay in try await CourierCore.sleep(on: clock, for: delay, as: .injectedLatency) }
        // A stub's own delay and chunk pauses run on the same clock.
        self.answer = { stub, request in
            try await InMemoryTransport(handler: { _ in stub }, recordingLimit: 0, clock: clock).send(hop: request, options: StreamOptions())
        }
    }

    /// Plays the outage a HAR recorded, one entry per request, in recorded order, then lets
    /// requests through untouched: each entry's time becomes a latency, an entry that failed
    /// (status 0) a ``TransportFailure/Kind/connectionLost`` failure, and a 429 or 5xx entry an
    /// answer with its status and headers (`Retry-After` included); any other entry's request
    /// goes to the executor. Record a real incident with ``HARRecorder``, then rehearse it.
    /// - Parameters:
    ///   - har: The recording.
    ///   - clock: The clock latencies run on: a ``ManualClock`` in tests.
    /// - Returns: The middleware.
    public static func replaying(_ har: HAR, clock: some Clock<Duration> = ContinuousClock()) -> FaultInjection {
        let timeline = har.log.entries.map { entry -> [Fault] in
            var faults: [Fault] = []
            if entry.time.isFinite, entry.time > 0 {
                faults.append(.latency(.milliseconds(Swift.min(entry.time, Request.maximumInterval * 1000))))
            }
            let status = entry.response.status
            if status == 0 {
                faults.append(.failure(.connectionLost))
            } else if status == 429 || (500...599).contains(status) {
                var headers = HTTPHeaders()
                for field in entry.response.headers where field.name.lowercased() != "content-length" {
                    headers.add(HeaderName(rawValue: field.name), field.value)
                }
                faults.append(.status(status, headers: headers))
            }
            return faults
        }
        return FaultInjection(source: .timeline(timeline, Locked(0)), random: .seeded(0), clock: clock)
    }

    /// Applies the faults that fire for `request`.
    /// - Parameters:
    ///   - request: The request.
    ///   - next: The rest of the chain.
    /// - Returns: The injected answer, or the chain's response (perhaps cut short).
    /// - Throws: An injected failure, or what the chain throws.
    public func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
        let faults: [Fault]
        switch source {
        case .rules(let rules):
            faults = rules.filter { rule in
                rule.matches(request) && (rule.probability >= 1 || (rule.probability > 0 && random.fraction() < rule.probability))
            }.map(\.fault)
        case .timeline(let entries, let cursor):
            let index = cursor.withLock { cursor -> Int in
                defer { cursor += 1 }
                return cursor
            }
            faults = index < entries.count ? entries[index] : []
        }
        guard !faults.isEmpty else { return try await next(request) }
        let origin = RetryBudget.origin(of: request)
        var truncation: Int?
        for fault in faults {
            ResilienceEvent.report(ResilienceEvent(.faultInjected, origin: origin, detail: fault.description))
            switch fault.action {
            case .latency(let delay):
                try await sleep(delay)
            case .answer(let stub, _):
                return try await answer(stub, request)
            case .truncate(let bytes):
                truncation = Swift.min(truncation ?? bytes, bytes)
            }
        }
        let response = try await next(request)
        guard let truncation else { return response }
        return Self.cut(response, after: truncation)
    }

    /// The response with its body cut after `limit` bytes and then failing.
    private static func cut(_ response: StreamedResponse, after limit: Int) -> StreamedResponse {
        let original = response.body
        let (body, continuation) = ByteStream.makeStream()
        let pump = Task {
            var passed = 0
            var iterator = original.makeAsyncIterator()
            do {
                while let chunk = try await iterator.next() {
                    guard passed + chunk.count <= limit else {
                        let allowed = chunk.prefix(limit - passed)
                        if !allowed.isEmpty { _ = await continuation.send(Data(allowed)) }
                        original.cancel()
                        let failure = TransportFailure(.truncatedBody, message: "injected fault: the body was cut after \(limit) bytes")
                        continuation.finish(throwing: CourierError(.transport(failure)))
                        return
                    }
                    passed += chunk.count
                    if !chunk.isEmpty, !(await continuation.send(chunk)) { return original.cancel() }
                }
                // A body no longer than the cut arrives whole.
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination { pump.cancel() }
        var cut = response
        cut.body = body
        return cut
    }
}
