@_spi(Transports) import CourierCore
import CourierResilience

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An executor that answers from memory: for unit tests, previews and offline demos.
///
/// Answers come from a handler closure or a route table. Every request it receives is recorded, in
/// order, as the ``Request`` value it was given, so a test can check exactly what would have been
/// sent. It uses no network and no global state, and is safe to share between tasks.
///
/// It runs the same ``Exchange`` as the network executors, with its stubs as the transport: a
/// stubbed redirect is followed under ``Executor/redirects`` (each hop recorded), the request's
/// timeout runs on the executor's clock, bodies are held to ``Executor/maximumResponseSize`` and
/// their `Content-Length`, and middleware added with ``Executor/with(_:)`` or
/// ``Executor/eachHop(_:)`` runs as it would in the app. Copies share the stubs and the record.
///
/// ```swift
/// let executor = InMemoryExecutor(routes: [
///     .init(.get, "/v1/users", .json([User(id: 1, name: "Ada")])),
///     .init(.delete, "/v1/users/1", .status(204)),
/// ])
/// let listUsers = Request.get |> baseURL("https://api.test") |> path("v1", "users") |> decode([User].self)
/// let users = try await executor.send(listUsers)
/// #expect(executor.requests.map(\.method) == [.get])
///
/// let cached = executor.eachHop(HTTPCache())   // the same stubs, behind a cache
/// ```
public struct InMemoryExecutor: Executor {
    /// Produces the stub for a request.
    public typealias Handler = @Sendable (Request) async throws -> Stub

    /// A method and a path template with the answer for requests that match them.
    ///
    /// ```swift
    /// InMemoryExecutor.Route(.get, "/v1/users/{id}") { request, parameters in
    ///     guard let id = parameters.int("id") else { return .status(400) }
    ///     return .json(User(id: id, name: "Ada"))
    /// }
    /// ```
    public struct Route: Sendable {
        /// The answer for a matched request and the template's variables.
        public typealias Responder = @Sendable (Request, PathParameters) async throws -> Stub

        /// The method to match.
        public var method: HTTPMethod
        /// The path to match, with `{name}` variables; see ``PathTemplate``.
        public var template: PathTemplate
        /// Produces the answer.
        public var respond: Responder

        /// Creates a route that always gives the same answer.
        /// - Parameters:
        ///   - method: The method to match.
        ///   - template: The path to match, for example `/v1/users/{id}`.
        ///   - stub: The answer.
        public init(_ method: HTTPMethod, _ template: PathTemplate, _ stub: Stub) {
            self.init(method, template) { _, _ in stub }
        }

        /// Creates a route whose answer is computed from the request and the matched variables.
        /// - Parameters:
        ///   - method: The method to match.
        ///   - template: The path to match, for example `/v1/users/{id}`.
        ///   - respond: Produces the answer; an error it throws is thrown as a transport failure.
        public init(_ method: HTTPMethod, _ template: PathTemplate, respond: @escaping Responder) {
            self.method = method
            self.template = template
            self.respond = respond
        }

        /// Creates a route that answers with `script` in order, one stub per matched request,
        /// then with `fallback`: "fail twice with 503, then succeed".
        /// - Parameters:
        ///   - method: The method to match.
        ///   - template: The path to match.
        ///   - script: The answers, in order.
        ///   - fallback: The answer once the script is used up.
        public init(_ method: HTTPMethod, _ template: PathTemplate, script: [Stub], then fallback: Stub) {
            let remaining = Locked(script[...])
            self.init(method, template) { _, _ in remaining.withLock { $0.popFirst() } ?? fallback }
        }

        /// The variables of `request`'s path when the route matches it, otherwise `nil`.
        /// - Parameter request: The request.
        /// - Returns: The matched variables.
        public func match(_ request: Request) -> PathParameters? {
            match(request.method, path: request.path)
        }

        func match(_ method: HTTPMethod, path: String) -> PathParameters? {
            method == self.method ? template.match(path) : nil
        }

        /// Says that nothing matched `request`, naming the closest route and how it differs.
        static func explainMiss(_ request: Request, path: String, routes: [Route]) -> String {
            let sent = "\(request.method.rawValue) \(path)"
            guard !routes.isEmpty else { return "\(sent) matches no route: the route table is empty" }
            let sentSegments = path.split(separator: "/", omittingEmptySubsequences: false)
            func score(_ route: Route) -> Int {
                let written = route.template.description.split(separator: "/", omittingEmptySubsequences: false)
                var same = zip(written, sentSegments).prefix { $0 == $1 || $0.hasPrefix("{") }.count * 2
                if written.count == sentSegments.count { same += 1 }
                if route.method == request.method { same += 3 }
                if route.template.match(path) != nil { same += 4 }
                return same
            }
            let closest = routes.max { score($0) < score($1) } ?? routes[0]
            var differences: [String] = []
            if closest.method != request.method { differences.append("method \(closest.method.rawValue), not \(request.method.rawValue)") }
            if closest.template.match(path) == nil { differences.append("path \(closest.template.description) does not match \(path)") }
            return "\(sent) matches no route; the closest is \(closest.method.rawValue) \(closest.template.description) ("
                + differences.joined(separator: "; ") + ")"
        }
    }

    /// The exchange every call runs through, over this executor's stubs.
    public var exchange: Exchange
    /// The stubs and the record of what they received; shared by copies.
    private let stubs: InMemoryTransport
    /// The most requests ``requests`` keeps; older ones are dropped (counted in
    /// ``droppedRequests``), so a long-running demo or load test does not grow without bound.
    public var recordingLimit: Int { stubs.recordingLimit }

    /// How many requests ``requests`` keeps by default: 10,000.
    public static let defaultRecordingLimit = 10_000

    /// Creates an executor that asks `handler` for each answer.
    /// - Parameters:
    ///   - clock: The clock that stub delays (``Stub/delayed(by:)``) wait on; pass a
    ///     ``ManualClock`` to drive them from a test without sleeping.
    ///     The request's ``Request/timeout`` runs on it too.
    ///   - recordingLimit: The most requests to keep in ``requests`` (the latest ones); 0 keeps
    ///     none.
    ///   - redirects: How a stubbed redirect is followed; ``RedirectPolicy/follow`` by default.
    ///   - maximumResponseSize: The most bytes a response body may have; `nil` (the default)
    ///     sets no limit.
    ///   - handler: Produces the stub for a request; an error it throws is thrown as a transport
    ///     failure.
    public init<C: Clock>(
        clock: C = ContinuousClock(), recordingLimit: Int = InMemoryExecutor.defaultRecordingLimit,
        redirects: RedirectPolicy = .follow, maximumResponseSize: Int? = nil, handler: @escaping Handler
    ) where C.Duration == Duration {
        stubs = InMemoryTransport(handler: handler, recordingLimit: recordingLimit, clock: clock)
        exchange = Exchange(transport: stubs, redirects: redirects, maximumResponseSize: maximumResponseSize, clock: clock)
    }

    /// Creates an executor that answers from a route table.
    ///
    /// A request that no route matches is a mistake in the test more often than a real 404, so
    /// by default it fails with ``CourierError/Cause/unanswered(_:)``, naming the request and
    /// the closest route. Pass `fallback: .status(404)` to answer such requests instead.
    /// - Parameters:
    ///   - routes: Routes matched by method and path template; the first match wins.
    ///   - fallback: The answer when no route matches; `nil` (the default) throws.
    ///   - clock: The clock that stub delays wait on.
    ///   - recordingLimit: The most requests to keep in ``requests``.
    ///   - redirects: How a stubbed redirect is followed; ``RedirectPolicy/follow`` by default.
    ///   - maximumResponseSize: The most bytes a response body may have; `nil` (the default)
    ///     sets no limit.
    public init<C: Clock>(
        routes: [Route], fallback: Stub? = nil, clock: C = ContinuousClock(),
        recordingLimit: Int = InMemoryExecutor.defaultRecordingLimit, redirects: RedirectPolicy = .follow,
        maximumResponseSize: Int? = nil
    ) where C.Duration == Duration {
        self.init(clock: clock, recordingLimit: recordingLimit, redirects: redirects, maximumResponseSize: maximumResponseSize) { request in
            let path = request.path  // rendered once, not once per route
            for route in routes {
                if let parameters = route.match(request.method, path: path) { return try await route.respond(request, parameters) }
            }
            if let fallback { return fallback }
            throw CourierError(.unanswered(Route.explainMiss(request, path: path, routes: routes)), request: request)
        }
    }

    /// Creates an executor that answers with `script` in order, one stub per request, then with
    /// `fallback`: for fault sequences such as "fail twice with 503, then succeed".
    /// - Parameters:
    ///   - script: The answers, in order.
    ///   - fallback: The answer once the script is used up.
    /// - Returns: The executor.
    public static func scripted(_ script: [Stub], then fallback: Stub) -> InMemoryExecutor {
        let remaining = Locked(script[...])
        return InMemoryExecutor { _ in remaining.withLock { $0.popFirst() } ?? fallback }
    }

    /// The requests received, in order (one per hop: a followed redirect is a request too): all
    /// of them, or the latest ``recordingLimit``.
    public var requests: [Request] { stubs.requests }

    /// How many requests were received but are no longer in ``requests`` (past the limit).
    public var droppedRequests: Int { stubs.droppedRequests }

    /// Forgets the recorded requests.
    public func reset() { stubs.reset() }
}

/// The transport of an ``InMemoryExecutor``: each hop answered by its handler, and recorded.
final class InMemoryTransport: UpgradesConnections {
    private let handler: InMemoryExecutor.Handler
    private let recorded = Locked<(requests: [Request], dropped: Int)>(([], 0))
    private let sleep: @Sendable (Duration) async throws -> Void
    let recordingLimit: Int

    init<C: Clock>(handler: @escaping InMemoryExecutor.Handler, recordingLimit: Int, clock: C) where C.Duration == Duration {
        self.handler = handler
        self.recordingLimit = max(0, recordingLimit)
        self.sleep = { delay in try await CourierCore.sleep(on: clock, for: min(delay, .seconds(Request.maximumInterval)), as: .stubDelay) }
    }

    var requests: [Request] {
        recorded.withLock { Array($0.requests.suffix(recordingLimit)) }
    }

    var droppedRequests: Int {
        recorded.withLock { $0.dropped + max(0, $0.requests.count - recordingLimit) }
    }

    func reset() { recorded.withLock { $0 = ([], 0) } }

    /// Records `request` and answers with the handler's stub: a response stub with its body in
    /// hand; a ``Stub/stream(_:status:headers:every:)`` stub with its chunks one by one (pausing
    /// `every` on the executor's clock, with backpressure from the reader), then its fault if it
    /// has one. An invalid request is not recorded; a cancelled delay throws `CancellationError`.
    func send(hop request: Request, options: StreamOptions) async throws -> StreamedResponse {
        let (stub, url) = try await answer(request, isValid: options.hopIsValid)
        if let switching = stub.switching { return Self.switchProtocols(switching, request: request, url: url, options: options) }
        let script: Stub.Script
        switch stub.outcome {
        case .response(var response):
            if response.url == nil { response.url = url }
            return StreamedResponse(response)
        case .failure(let error):
            throw Self.onNewConnection(error)
        case .stream(let streamed):
            script = streamed
        }
        var head = script.head
        if head.url == nil { head.url = url }
        let (body, continuation) = ByteStream.makeStream(bufferLimit: options.bufferLimit)
        let sleep = self.sleep
        let producer = Task {
            do {
                for chunk in script.chunks {
                    if let interval = script.interval { try await sleep(interval) }
                    guard await continuation.send(chunk) else { return }
                }
                continuation.finish(throwing: script.failure)
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination { producer.cancel() }
        return StreamedResponse(head: head, body: body)
    }

    /// The `101` of a switching stub: with the connection handed over and the stub's peer on
    /// its other end when the call asked to switch, bare otherwise.
    private static func switchProtocols(_ switching: Stub.Switch, request: Request, url: URL, options: StreamOptions) -> StreamedResponse {
        let headers = switching.headers(request)
        guard let upgrade = options.upgrade else { return StreamedResponse(status: 101, headers: headers, url: url, body: ByteStream(Data())) }
        let (toClient, clientSide) = ByteStream.makeStream(bufferLimit: options.bufferLimit)
        let (toPeer, peerSide) = ByteStream.makeStream(bufferLimit: options.bufferLimit)
        let peer = UpgradedPeer(incoming: toPeer, outgoing: clientSide, incomingEnd: peerSide)
        upgrade.accept(InMemoryConnection(outgoing: peerSide, incoming: clientSide))
        let server = Task {
            await switching.peer(peer)
            peer.close()
        }
        // The client closing its end stops the peer's task.
        peerSide.onTermination { server.cancel() }
        return StreamedResponse(status: 101, headers: headers, url: url, body: toClient)
    }

    /// A stubbed lost connection that does not say whether its connection carried earlier hops
    /// is taken as CourierNIO takes one it opened for the hop (each in-memory answer is a new
    /// "connection"): `connectionWasReused` is `false`, so the exchange does not send the hop
    /// again, and a test sees the traffic the real transport would send. A stub that sets it to
    /// `true` gets the exchange's one resend.
    private static func onNewConnection(_ error: any Error) -> any Error {
        guard var courier = error as? CourierError, case .transport(var failure) = courier.cause, failure.kind == .connectionLost,
            failure.connectionWasReused == nil
        else { return error }
        failure.connectionWasReused = false
        courier.cause = .transport(failure)
        return courier
    }

    /// Validates and records `request`, then takes its stub and waits out the stub's delay.
    private func answer(_ request: Request, isValid: Bool) async throws -> (Stub, URL) {
        // Rendering the URL validates the request (unless the exchange did), and the response
        // carries it.
        let url = try request.hopURL(isValid: isValid)
        if recordingLimit > 0 {
            recorded.withLock { state in
                state.requests.append(request)
                // Trim in batches, so that keeping the latest N costs O(1) per request.
                if state.requests.count >= 2 * recordingLimit {
                    let excess = state.requests.count - recordingLimit
                    state.requests.removeFirst(excess)
                    state.dropped += excess
                }
            }
        } else {
            recorded.withLock { $0.dropped += 1 }
        }
        let stub = try await handler(request)
        if let delay = stub.delay { try await sleep(delay) }
        try Task.checkCancellation()
        return (stub, url)
    }
}
