import Foundation

/// An executor that answers from memory: for unit tests, previews and offline demos.
///
/// Answers come from a handler closure or a route table. Every request it receives is recorded, in
/// order, as the ``Request`` value it was given, so a test can check exactly what would have been
/// sent. It uses no network and no global state, and is safe to share between tasks.
///
/// ```swift
/// let executor = InMemoryExecutor(routes: [
///     .init(.get, "/v1/users", .json([User(id: 1, name: "Ada")])),
///     .init(.delete, "/v1/users/1", .status(204)),
/// ])
/// let users = try await executor.send(listUsers)
/// #expect(executor.requests.map(\.method) == [.get])
/// ```
public final class InMemoryExecutor: Executor {
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
    }

    private let handler: Handler
    private let recorded = Locked<[Request]>([])

    /// Creates an executor that asks `handler` for each answer.
    /// - Parameter handler: Produces the stub for a request; an error it throws is thrown as a
    ///   transport failure.
    public init(handler: @escaping Handler) {
        self.handler = handler
    }

    /// Creates an executor that answers from a route table.
    /// - Parameters:
    ///   - routes: Routes matched by method and path template; the first match wins.
    ///   - fallback: The answer when no route matches; 404 with an empty body by default.
    public convenience init(routes: [Route], fallback: Stub = .status(404)) {
        self.init { request in
            let path = request.path  // rendered once, not once per route
            for route in routes {
                if let parameters = route.match(request.method, path: path) { return try await route.respond(request, parameters) }
            }
            return fallback
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

    /// Every request received, in order.
    public var requests: [Request] { recorded.withLock { $0 } }

    /// Forgets the recorded requests.
    public func reset() { recorded.withLock { $0.removeAll() } }

    /// Records `request` and answers with the handler's stub.
    /// - Parameter request: The request.
    /// - Returns: The stub's response, with the request's URL.
    /// - Throws: ``CourierError`` for an invalid request (which is not recorded), the stub's
    ///   failure, or `CancellationError` when cancelled during a delay.
    public func execute(_ request: Request) async throws -> Response {
        // Rendering the URL validates the request, and the response carries it.
        let url = try request.validatedURL()
        recorded.withLock { $0.append(request) }
        let stub = try await handler(request)
        if let delay = stub.delay { try await Task.sleep(for: min(delay, .seconds(Request.maximumInterval))) }
        try Task.checkCancellation()
        switch stub.outcome {
        case .response(var response):
            if response.url == nil { response.url = url }
            return response
        case .failure(let error):
            throw error
        }
    }
}

extension Request {
    /// The percent-encoded path as sent, without the query: `/v1/users/a%2Fb`.
    public var path: String {
        let target = target(redacting: nil)
        guard let mark = target.firstIndex(of: "?") else { return target }
        return String(target[..<mark])
    }
}
