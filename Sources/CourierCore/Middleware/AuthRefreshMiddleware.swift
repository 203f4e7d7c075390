#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Attaches a credential to requests for chosen origins and, on a `401`, refreshes it once for
/// everyone waiting, then retries.
///
/// - **Single flight**: however many requests get a `401` at the same time, the refresh runs
///   once; every one of them then retries once with the new credential.
/// - A `401` for a credential that has already been replaced retries with the current one,
///   without refreshing again.
/// - A failed refresh reaches every waiter as ``CourierError/Cause/authenticationFailed(_:)`` and
///   clears the credential, so the next request refreshes anew.
/// - More than `maxRefreshes` refreshes within `window` is an error, not a loop.
/// - A caller cancelled while it waits for a refresh ends at once with
///   ``CourierError/Cause/cancelled``; the refresh goes on for the others.
/// - Requests to other origins pass through untouched: a credential never leaks to a host it was
///   not meant for.
///
/// ```swift
/// let auth = AuthRefreshMiddleware(origins: ["https://api.example.com"]) { rejected in
///     try await tokenStore.refresh()       // returns the new access token
/// }
/// let executor = URLSessionExecutor().with(auth)
/// ```
public struct AuthRefreshMiddleware: Middleware {
    /// Obtains a new credential; receives the one the server rejected, if any.
    public typealias Refresh = @Sendable (_ rejected: String?) async throws -> String
    /// Attaches a credential to a request.
    public typealias Apply = @Sendable (Request, String) -> Request

    private let origins: Set<Origin>
    private let state: Locked<State>
    private let refresh: Refresh
    private let apply: Apply
    private let clock: ElapsedClock
    private let maxRefreshes: Int
    private let window: Duration

    private enum Step {
        case use(String)
        case wait
        case lead
        case fail(CourierError)
    }

    private struct State {
        var current: String?
        var refreshing = false
        var waiters: [Int: CheckedContinuation<String, any Error>] = [:]
        var nextWaiter = 0
        var refreshTimes: [Duration] = []
    }

    /// Creates the middleware.
    /// - Parameters:
    ///   - origins: The origins (`scheme://host[:port]`) that get the credential.
    ///   - credential: The credential to start with; `nil` refreshes before the first request.
    ///   - maxRefreshes: The most refreshes allowed within `window`; 3 by default.
    ///   - window: The window for `maxRefreshes`; 60 s by default.
    ///   - clock: The clock for the window: `ContinuousClock` by default, a ``ManualClock`` in
    ///     tests.
    ///   - apply: Attaches the credential; `Authorization: Bearer …` by default.
    ///   - refresh: Obtains a new credential.
    public init(
        origins: [String], credential: String? = nil, maxRefreshes: Int = 3, window: Duration = .seconds(60),
        clock: some Clock<Duration> = ContinuousClock(), apply: @escaping Apply = { request, token in request.applying(bearer(token)) },
        refresh: @escaping Refresh
    ) {
        self.origins = Set(origins.compactMap { URL(string: $0).flatMap(Origin.init) })
        self.state = Locked(State(current: credential))
        self.refresh = refresh
        self.apply = apply
        self.clock = ElapsedClock(clock)
        self.maxRefreshes = max(1, maxRefreshes)
        self.window = window
    }

    /// The credential in use now, if any.
    public var currentCredential: String? { state.withLock { $0.current } }

    /// Attaches the credential (for configured origins), and refreshes and retries once on `401`.
    /// - Parameters:
    ///   - request: The request.
    ///   - next: The rest of the chain.
    /// - Returns: The response.
    /// - Throws: ``CourierError`` with ``CourierError/Cause/authenticationFailed(_:)`` when no
    ///   credential can be had, or whatever `next` throws.
    public func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
        guard let origin = request.baseURL.flatMap(Origin.init), origins.contains(origin) else {
            return try await next(request)
        }
        let credential = try await currentOrRefreshed(rejected: nil)
        let response = try await next(apply(request, credential))
        guard response.status == 401 else { return response }
        // The rejected attempt's body is not wanted: stop its transfer whatever comes next.
        response.body.cancel()
        let fresh = try await currentOrRefreshed(rejected: credential)
        return try await next(apply(request, fresh))
    }

    /// The current credential if it is not the rejected one; otherwise joins or starts a refresh.
    ///
    /// A caller cancelled while it waits leaves at once with `CancellationError`; the refresh
    /// itself runs on in its own task, for the other waiters and the next request.
    private func currentOrRefreshed(rejected: String?) async throws -> String {
        let now = clock.now
        let window = self.window
        let maxRefreshes = self.maxRefreshes
        let id = state.withLock { state -> Int in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<String, any Error>) in
                let step = state.withLock { state -> Step in
                    if let current = state.current, current != rejected { return .use(current) }
                    if state.refreshing {
                        state.waiters[id] = continuation
                        return .wait
                    }
                    state.refreshTimes.removeAll { now - $0 >= window }
                    guard state.refreshTimes.count < maxRefreshes else {
                        return .fail(
                            CourierError(
                                .authenticationFailed("more than \(maxRefreshes) credential refreshes within \(window)")))
                    }
                    state.refreshTimes.append(now)
                    state.refreshing = true
                    state.waiters[id] = continuation
                    return .lead
                }
                switch step {
                case .use(let credential): continuation.resume(returning: credential)
                case .fail(let error): continuation.resume(throwing: error)
                case .wait: break
                case .lead: Task { await runRefresh(rejected: rejected) }
                }
                // Cancelled before the continuation was registered: the handler below found
                // nothing to resume, so leave now.
                if Task.isCancelled { leave(id) }
            }
        } onCancel: {
            leave(id)
        }
    }

    /// Resumes waiter `id` with `CancellationError`, if it is still waiting.
    private func leave(_ id: Int) {
        let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
        waiter?.resume(throwing: CancellationError())
    }

    /// Runs the refresh and hands its outcome to every waiter.
    private func runRefresh(rejected: String?) async {
        let outcome: Result<String, any Error>
        do {
            outcome = .success(try await refresh(rejected))
        } catch {
            let reason = "the credential refresh failed (\(type(of: error)))"
            outcome = .failure(CourierError(.authenticationFailed(reason), underlyingError: error))
        }
        let waiters = state.withLock { state -> [CheckedContinuation<String, any Error>] in
            state.refreshing = false
            state.current = try? outcome.get()
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(with: outcome) }
    }
}

extension AuthRefreshMiddleware: CustomStringConvertible, CustomReflectable {
    /// The origins and limits, never the credential.
    public var description: String {
        let names = origins.map { "\($0.scheme)://\($0.host):\($0.port)" }.sorted().joined(separator: ", ")
        let holding = currentCredential == nil ? "no credential" : "a credential (<redacted>)"
        return "AuthRefreshMiddleware(origins: [\(names)], \(holding), at most \(maxRefreshes) refreshes per \(window))"
    }

    /// The same facts as ``description``: `dump` never shows the credential.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "origins": origins.map { "\($0.scheme)://\($0.host):\($0.port)" }.sorted(),
                "credential": currentCredential == nil ? "none" : Redaction.placeholder,
                "maxRefreshes": maxRefreshes, "window": window,
            ])
    }
}

