import CourierCore
import Foundation

/// One guarantee every Courier transport keeps, stated as a check against the project's loopback
/// test servers (or, for the ones that need no network, against ``ConformanceSuite/reference()``).
///
/// Run the whole suite from a test target of your transport's package, one test per case:
///
/// ```swift
/// import CourierConformance
/// import Testing
///
/// @Test(arguments: ConformanceSuite.cases)
/// func conforms(_ check: ConformanceCase) async throws {
///     try await check.run(servers: .fromEnvironment()) { options in MyExecutor(options) }
/// }
/// ```
///
/// `scripts/test` starts the servers and exports their addresses (``ConformanceServers/fromEnvironment()``).
public struct ConformanceCase: Sendable, CustomStringConvertible {
    /// What a case needs from the executor under test beyond the ``Executor`` contract.
    public enum Requirement: String, Sendable, Hashable {
        /// Real HTTP against the loopback servers: redirects, framing, compression, uploads.
        case network
        /// Time passes as the answers say (delays, drips): not a replay.
        case timing
    }

    /// The guarantee, in words: `redirects: a cross-origin hop drops credentials`.
    public let name: String
    /// What the case needs; an executor without one of these skips it by filtering
    /// ``ConformanceSuite/cases(meeting:)``.
    public let requirements: Set<Requirement>
    let check: @Sendable (ConformanceContext) async throws -> Void

    init(_ name: String, needs requirements: Set<Requirement> = [.network], check: @escaping @Sendable (ConformanceContext) async throws -> Void) {
        self.name = name
        self.requirements = requirements
        self.check = check
    }

    /// The guarantee, in words.
    public var description: String { name }

    /// Runs the case.
    /// - Parameters:
    ///   - servers: Where the loopback servers listen.
    ///   - makeExecutor: Makes the executor under test with the options the case asks for; called
    ///     once or more per case, each executor used only by that case.
    /// - Throws: ``ConformanceFailure`` when the guarantee does not hold, or the unexpected error.
    public func run(
        servers: ConformanceServers, makeExecutor: @escaping @Sendable (ConformanceOptions) -> any Executor
    ) async throws {
        try await check(ConformanceContext(name: name, servers: servers, make: makeExecutor))
    }
}

/// How a case wants the executor under test made.
public struct ConformanceOptions: Sendable {
    /// The most bytes a response body may have, or `nil` for no limit.
    public var maximumResponseSize: Int?
    /// How redirects are followed.
    public var redirects: RedirectPolicy
    /// Middleware to run around every hop of a redirect chain (``Courier/Exchange/hopMiddleware``),
    /// outermost first; empty for most cases. An executor that is an ``Courier/Exchange`` over a
    /// transport passes it on: `Exchange(transport: t, redirects: options.redirects,
    /// hopMiddleware: options.hopMiddleware)`.
    public var hopMiddleware: [any Middleware]

    /// Creates options.
    /// - Parameters:
    ///   - maximumResponseSize: The body size limit.
    ///   - redirects: The redirect policy.
    ///   - hopMiddleware: Middleware around every hop.
    public init(maximumResponseSize: Int? = nil, redirects: RedirectPolicy = .follow, hopMiddleware: [any Middleware] = []) {
        self.maximumResponseSize = maximumResponseSize
        self.redirects = redirects
        self.hopMiddleware = hopMiddleware
    }
}

/// A guarantee that did not hold: which case, what was expected, where in the suite.
public struct ConformanceFailure: Error, CustomStringConvertible {
    /// The case and what went wrong.
    public var description: String
}

/// What a case runs with: the servers, the executor factory, and checks that fail with a
/// ``ConformanceFailure`` naming the case.
struct ConformanceContext: Sendable {
    let name: String
    let servers: ConformanceServers
    let make: @Sendable (ConformanceOptions) -> any Executor

    /// The executor under test, made with `options`.
    func executor(_ options: ConformanceOptions = ConformanceOptions()) -> any Executor { make(options) }

    /// A request to the first httpbin.
    func httpbin(_ method: Request = .get) -> Request { method |> baseURL(servers.httpbin) }
    /// A request to the hostile server.
    func hostile(_ method: Request = .get) -> Request { method |> baseURL(servers.hostile) }
    /// A request to the stream server.
    func stream(_ method: Request = .get) -> Request { method |> baseURL(servers.stream) }

    /// Fails the case unless `condition` holds.
    func expect(_ condition: Bool, _ message: @autoclosure () -> String, line: Int = #line) throws(ConformanceFailure) {
        guard condition else { throw failure(message(), line: line) }
    }

    /// Runs `body`, which must throw a ``CourierError``, and returns that error.
    func error(line: Int = #line, _ body: () async throws -> Void) async throws -> CourierError {
        do {
            try await body()
        } catch let error as CourierError {
            return error
        } catch {
            throw failure("expected a CourierError, got \(error)", line: line)
        }
        throw failure("expected a CourierError, got success", line: line)
    }

    /// The failure of this case.
    func failure(_ message: String, line: Int = #line) -> ConformanceFailure {
        ConformanceFailure(description: "\(name): \(message) (CourierConformance, line \(line))")
    }
}

extension CourierError {
    /// The transport failure's kind, when this is one.
    var transportKind: TransportFailure.Kind? {
        if case .transport(let failure) = cause { return failure.kind }
        return nil
    }

    /// Whether this is ``CourierError/Cause/timedOut``.
    var isTimeout: Bool {
        if case .timedOut = cause { return true }
        return false
    }

    /// Whether this is ``CourierError/Cause/cancelled``.
    var isCancellation: Bool {
        if case .cancelled = cause { return true }
        return false
    }
}
