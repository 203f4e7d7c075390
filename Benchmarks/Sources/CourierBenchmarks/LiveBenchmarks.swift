import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// 3 and 4: Courier over URLSession against raw URLSession, same configuration, same server.
enum LiveBenchmarks {
    struct Payload: Codable, Sendable {
        var id: Int
        var name: String
    }

    enum Kind: String, CaseIterable {
        case small, large, noContent
        var path: String {
            switch self {
            case .small: "small.json"
            case .large: "large.json"
            case .noContent: "204"
            }
        }
    }

    /// The configuration raw URLSession runs with: the one Courier's sessions run with. On Linux
    /// `URLSessionTransport` drops the `URLCache` (FoundationNetworking traps a task cancelled
    /// during its cache lookup), so the baseline does too: the rows compare the same work, not a
    /// cache lookup and store per request that only one side does.
    static var baselineConfiguration: URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        #if canImport(FoundationNetworking)
            configuration.urlCache = nil
        #endif
        return configuration
    }

    /// One measured batch: requests per second and CPU seconds per request.
    struct Batch {
        var throughput: Double
        var cpuPerRequest: Double
    }

    static func batch(total: Int, concurrency: Int, _ send: @escaping @Sendable () async throws -> Void) async throws -> Batch {
        let cpuStart = cpuSeconds()
        let clock = ContinuousClock()
        let start = clock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<concurrency {
                let share = total / concurrency + (worker < total % concurrency ? 1 : 0)
                group.addTask { for _ in 0..<share { try await send() } }
            }
            try await group.waitForAll()
        }
        let elapsed = clock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return Batch(throughput: Double(total) / seconds, cpuPerRequest: (cpuSeconds() - cpuStart) / Double(total))
    }

    static func courierSender(
        _ kind: Kind, base: String, executor: any Executor, timeout seconds: TimeInterval? = nil
    ) -> @Sendable () async throws -> Void {
        switch kind {
        case .small:
            var request = Request.get |> baseURL(base) |> path(kind.path)
            if let seconds { request = request |> timeout(seconds) }
            let resource = request |> decode(Payload.self)
            return { blackHole(try await executor.send(resource)) }
        case .large:
            let resource = Request.get |> baseURL(base) |> path(kind.path) |> decode([Payload].self)
            return { blackHole(try await executor.send(resource)) }
        case .noContent:
            let resource = Request.get |> baseURL(base) |> path(kind.path) |> decodeEmpty()
            return { try await executor.send(resource) }
        }
    }

    static func rawSender(
        _ kind: Kind, base: String, session: URLSession, timeout: TimeInterval? = nil
    ) throws -> @Sendable () async throws -> Void {
        try foundationSender(kind, base: base, timeout: timeout) { try await session.data(for: $0) }
    }

    static func delegateSender(_ kind: Kind, base: String, client: DelegateClient) throws -> @Sendable () async throws -> Void {
        try foundationSender(kind, base: base) { try await client.data(for: $0) }
    }

    /// The hand-written client: a prebuilt `URLRequest`, a status check and `JSONDecoder`.
    private static func foundationSender(
        _ kind: Kind, base: String, timeout: TimeInterval? = nil,
        fetch: @escaping @Sendable (URLRequest) async throws -> (Data, URLResponse?)
    ) throws -> @Sendable () async throws -> Void {
        guard let url = URL(string: base + "/" + kind.path) else { throw BenchmarkError(message: "bad URL") }
        var prepared = URLRequest(url: url)
        if let timeout { prepared.timeoutInterval = timeout }
        let request = prepared
        let decoder = JSONDecoder()
        return {
            let (data, response) = try await fetch(request)
            guard let http = response as? HTTPURLResponse, (200..<300).contains(http.statusCode) else {
                throw BenchmarkError(message: "unexpected response")
            }
            switch kind {
            case .small: blackHole(try decoder.decode(Payload.self, from: data))
            case .large: blackHole(try decoder.decode([Payload].self, from: data))
            case .noContent: blackHole(data)
            }
        }
    }

    /// Warms both up, then alternates them `runs` times (the order flips every run, so neither
    /// always meets a warmer server), recording throughput and, when labelled, CPU per request.
    static func alternate(
        _ name: String, target: String, runs: Int, total: Int, concurrency: Int,
        candidate: @escaping @Sendable () async throws -> Void, baseline: @escaping @Sendable () async throws -> Void,
        cpuLabels: (String, String)? = nil
    ) async throws -> Comparison {
        _ = try await batch(total: max(16, total / 10), concurrency: concurrency, candidate)
        _ = try await batch(total: max(16, total / 10), concurrency: concurrency, baseline)
        var comparison = Comparison(name: name, unit: "req/s", higherIsBetter: true, target: target)
        var cpu: (candidate: [Double], baseline: [Double]) = ([], [])
        for run in 0..<runs {
            for isCandidate in run % 2 == 0 ? [true, false] : [false, true] {
                let result = try await batch(total: total, concurrency: concurrency, isCandidate ? candidate : baseline)
                if isCandidate {
                    comparison.courier.append(result.throughput)
                    cpu.candidate.append(result.cpuPerRequest)
                } else {
                    comparison.baseline.append(result.throughput)
                    cpu.baseline.append(result.cpuPerRequest)
                }
            }
        }
        if let (first, second) = cpuLabels {
            comparison.extra = String(
                format: "CPU/request: \(first) %.0f µs, \(second) %.0f µs", median(cpu.candidate) * 1e6, median(cpu.baseline) * 1e6)
        }
        return comparison
    }

    /// 3b. The same small and 204 requests through raw URLSession with a data delegate (what
    /// Courier's executor is built on) against `data(for:)`: the cost of the delegate mechanism
    /// alone.
    static func delegateCost(base: String, runs: Int) async throws -> [Comparison] {
        let client = DelegateClient(configuration: baselineConfiguration)
        let session = URLSession(configuration: baselineConfiguration)
        var results: [Comparison] = []
        for kind in [Kind.small, .noContent] {
            for concurrency in [1, 16] {
                results.append(
                    try await alternate(
                        "3b. raw delegate session vs data(for:), \(kind.rawValue), concurrency \(concurrency)",
                        target: "(context)", runs: runs, total: requests(for: kind, concurrency: concurrency),
                        concurrency: concurrency, candidate: try delegateSender(kind, base: base, client: client),
                        baseline: try rawSender(kind, base: base, session: session), cpuLabels: ("delegate", "data(for:)")))
            }
        }
        return results
    }

    static func requests(for kind: Kind, concurrency: Int) -> Int {
        switch kind {
        case .large: concurrency == 1 ? 40 : 160
        default: concurrency == 1 ? 400 : 1600
        }
    }

    static func compare(base: String, runs: Int) async throws -> [Comparison] {
        let executor = URLSessionExecutor(configuration: .ephemeral)
        let session = URLSession(configuration: baselineConfiguration)
        var results: [Comparison] = []
        for kind in Kind.allCases {
            for concurrency in [1, 16] {
                results.append(
                    try await alternate(
                        "3. live \(kind.rawValue), concurrency \(concurrency)", target: "≥ 0.97", runs: runs,
                        total: requests(for: kind, concurrency: concurrency), concurrency: concurrency,
                        candidate: courierSender(kind, base: base, executor: executor),
                        baseline: try rawSender(kind, base: base, session: session), cpuLabels: ("Courier", "raw")))
            }
        }
        return results
    }

    /// 4. The live small-JSON path with logging (sink discarding) and retry (no retries happen)
    /// against the same executor without middleware. The redirect policy is always on: it is the
    /// executor's own session delegate.
    static func middleware(base: String, runs: Int) async throws -> [Comparison] {
        let executor = URLSessionExecutor(configuration: .ephemeral)
        let wrapped = executor.with(LoggingMiddleware { _ in }, RetryMiddleware())
        var results: [Comparison] = []
        for concurrency in [1, 16] {
            results.append(
                try await alternate(
                    "4. logging + retry middleware, concurrency \(concurrency)", target: "≥ 0.95", runs: runs,
                    total: requests(for: .small, concurrency: concurrency), concurrency: concurrency,
                    candidate: courierSender(.small, base: base, executor: wrapped),
                    baseline: courierSender(.small, base: base, executor: executor)))
        }
        return results
    }
}
