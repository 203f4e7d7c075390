import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One live measurement in a process of its own (`--live-row`): Benchmarks/run starts a fresh
/// process for every batch, so no row inherits another's heap, connections or thread pool state
/// (throughput drifts down over a long benchmark process).
enum LiveRow {
    struct Result: Codable {
        var throughput: Double
        var cpuPerRequest: Double
        var requests: Int
    }

    /// What sends the requests of a row.
    enum Variant: String {
        /// `URLSessionExecutor().send(resource)`.
        case courier
        /// The same with `maximumResponseSize` set (10 MB).
        case courierLimit = "courier-limit"
        /// `URLSessionExecutor().send(resource)` with a 30 s `timeout` on every request: the
        /// exchange watches the body arrive (the streamed path).
        case courierTimeout = "courier-timeout"
        /// `raw` with the same 30 s `timeoutInterval` on its `URLRequest`.
        case rawTimeout = "raw-timeout"
        /// The same executor wrapped in logging (discarding) and retry middleware.
        case courierMiddleware = "courier-middleware"
        /// `URLSession.data(for:)`, a status check and `JSONDecoder`: the hand-written client.
        case raw
        /// Raw URLSession through a minimal data delegate.
        case delegate
    }

    static func run(kind: LiveBenchmarks.Kind, variant: Variant, base: String, concurrency: Int, total: Int) async throws -> Result {
        let send: @Sendable () async throws -> Void
        var keepAlive: [AnyObject] = []
        switch variant {
        case .courier:
            let executor = URLSessionExecutor(configuration: .ephemeral)
            keepAlive.append(executor.transport)
            send = LiveBenchmarks.courierSender(kind, base: base, executor: executor)
        case .courierLimit:
            let executor = URLSessionExecutor(configuration: .ephemeral, maximumResponseSize: 10 << 20)
            keepAlive.append(executor.transport)
            send = LiveBenchmarks.courierSender(kind, base: base, executor: executor)
        case .courierTimeout:
            let executor = URLSessionExecutor(configuration: .ephemeral)
            keepAlive.append(executor.transport)
            send = LiveBenchmarks.courierSender(kind, base: base, executor: executor, timeout: 30)
        case .rawTimeout:
            let session = URLSession(configuration: LiveBenchmarks.baselineConfiguration)
            keepAlive.append(session)
            send = try LiveBenchmarks.rawSender(kind, base: base, session: session, timeout: 30)
        case .courierMiddleware:
            let executor = URLSessionExecutor(configuration: .ephemeral)
            keepAlive.append(executor.transport)
            send = LiveBenchmarks.courierSender(kind, base: base, executor: executor.with(LoggingMiddleware { _ in }, RetryMiddleware()))
        case .raw:
            let session = URLSession(configuration: LiveBenchmarks.baselineConfiguration)
            keepAlive.append(session)
            send = try LiveBenchmarks.rawSender(kind, base: base, session: session)
        case .delegate:
            let client = DelegateClient(configuration: LiveBenchmarks.baselineConfiguration)
            keepAlive.append(client)
            send = try LiveBenchmarks.delegateSender(kind, base: base, client: client)
        }
        // Warm up: connections, caches, the thread pool.
        _ = try await LiveBenchmarks.batch(total: max(32, total / 10), concurrency: concurrency, send)
        let batch = try await LiveBenchmarks.batch(total: total, concurrency: concurrency, send)
        withExtendedLifetime(keepAlive) {}
        return Result(throughput: batch.throughput, cpuPerRequest: batch.cpuPerRequest, requests: total)
    }
}
