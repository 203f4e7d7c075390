import CourierCore
import CourierResilience
import CourierTesting
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
///     try await check.run(servers: .fromEnvironment()) { Exchange(transport: MyTransport()) }
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
    ///   - makeExecutor: Makes the executor under test, as a user would make it; called once or
    ///     more per case, each executor used only by that case. The case sets on it the redirect
    ///     policy, size limit and hop middleware it needs, through its ``Executor/exchange``.
    /// - Throws: ``ConformanceFailure`` when the guarantee does not hold, or the unexpected error.
    public func run(servers: ConformanceServers, makeExecutor: @escaping @Sendable () -> any Executor) async throws {
        try await check(ConformanceContext(name: name, servers: servers, make: makeExecutor))
    }
}

/// How a case wants the executor under test configured.
struct ConformanceOptions: Sendable {
    var maximumResponseSize: Int? = nil
    var redirects: RedirectPolicy = .follow
    var hopMiddleware: [any Middleware] = []
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
    let make: @Sendable () -> any Executor

    /// The executor under test, configured with `options` (on every transport alike: through its
    /// exchange).
    func executor(_ options: ConformanceOptions = ConformanceOptions()) -> any Executor {
        var executor = make()
        executor.redirects = options.redirects
        executor.maximumResponseSize = options.maximumResponseSize
        executor.exchange.hopMiddleware += options.hopMiddleware
        return executor
    }

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
