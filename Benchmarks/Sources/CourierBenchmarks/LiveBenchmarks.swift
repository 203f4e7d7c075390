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

    static func courierSender(_ kind: Kind, base: String, executor: any Executor) -> @Sendable () async throws -> Void {
        switch kind {
        case .small:
            let resource = Request.get |> baseURL(base) |> path(kind.path) |> decode(Payload.self)
            return { blackHole(try await executor.send(resource)) }
        case .large:
            let resource = Request.get |> baseURL(base) |> path(kind.path) |> decode([Payload].self)
            return { blackHole(try await executor.send(resource)) }
        case .noContent:
            let resource = Request.get |> baseURL(base) |> path(kind.path) |> decodeEmpty()
            return { try await executor.send(resource) }
        }
    }

    static func rawSender(_ kind: Kind, base: String, session: URLSession) throws -> @Sendable () async throws -> Void {
        guard let url = URL(string: base + "/" + kind.path) else { throw BenchmarkError(message: "bad URL") }
        let request = URLRequest(url: url)
        let decoder = JSONDecoder()
        return {
            let (data, response) = try await session.data(for: request)
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

    static func requests(for kind: Kind, concurrency: Int) -> Int {
        switch kind {
        case .large: concurrency == 1 ? 40 : 160
        default: concurrency == 1 ? 400 : 1600
        }
    }

    static func compare(base: String, runs: Int) async throws -> [Comparison] {
        let executor = URLSessionExecutor(configuration: .ephemeral)
        let session = URLSession(configuration: .ephemeral)
        var results: [Comparison] = []
        for kind in Kind.allCases {
            for concurrency in [1, 16] {
                let courier = courierSender(kind, base: base, executor: executor)
                let raw = try rawSender(kind, base: base, session: session)
                let total = requests(for: kind, concurrency: concurrency)
                // Warm up both: connections, caches, lazy initialisation.
                _ = try await batch(total: max(16, total / 10), concurrency: concurrency, courier)
                _ = try await batch(total: max(16, total / 10), concurrency: concurrency, raw)
                var comparison = Comparison(
                    name: "3. live \(kind.rawValue), concurrency \(concurrency)", unit: "req/s", higherIsBetter: true,
                    target: "≥ 0.97")
                var cpuCourier: [Double] = []
                var cpuRaw: [Double] = []
                for run in 0..<runs {
                    // Alternate which goes first, so neither always meets a warmer server.
                    let order: [Bool] = run % 2 == 0 ? [true, false] : [false, true]
                    for isCourier in order {
                        let result = try await batch(total: total, concurrency: concurrency, isCourier ? courier : raw)
                        if isCourier {
                            comparison.courier.append(result.throughput)
                            cpuCourier.append(result.cpuPerRequest)
                        } else {
                            comparison.baseline.append(result.throughput)
                            cpuRaw.append(result.cpuPerRequest)
                        }
                    }
                }
                comparison.extra = String(
                    format: "CPU/request: Courier %.0f µs, raw %.0f µs", median(cpuCourier) * 1e6, median(cpuRaw) * 1e6)
                results.append(comparison)
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
            let plain = courierSender(.small, base: base, executor: executor)
            let withMiddleware = courierSender(.small, base: base, executor: wrapped)
            let total = requests(for: .small, concurrency: concurrency)
            _ = try await batch(total: total / 10, concurrency: concurrency, plain)
            _ = try await batch(total: total / 10, concurrency: concurrency, withMiddleware)
            var comparison = Comparison(
                name: "4. logging + retry middleware, concurrency \(concurrency)", unit: "req/s", higherIsBetter: true,
                target: "≥ 0.95")
            for run in 0..<runs {
                let order: [Bool] = run % 2 == 0 ? [true, false] : [false, true]
                for isWrapped in order {
                    let result = try await batch(total: total, concurrency: concurrency, isWrapped ? withMiddleware : plain)
                    if isWrapped { comparison.courier.append(result.throughput) } else { comparison.baseline.append(result.throughput) }
                }
            }
            results.append(comparison)
        }
        return results
    }
}
