import Courier
import Foundation

/// 8. The HTTP cache: what a hit costs, and what a revalidation costs against a plain GET.
enum CacheBenchmarks {
    /// 8a. `send` answered by the cache (a fresh hit: no transport call) against the same `send`
    /// answered by the in-memory transport with no cache: the cache's lookup, age and
    /// `Cache-Status` against a transport that does nothing. Microseconds per call, and the
    /// transport calls the hits made (must be 0).
    static func hit(runs: Int, iterations: Int) async throws -> Comparison {
        let body = Data(#"{"id": 1, "name": "Ada Lovelace, the first programmer"}"#.utf8)
        let transport = InMemoryExecutor(recordingLimit: 0) { _ in .status(200, headers: ["Cache-Control": "max-age=3600"], body: body) }
        let cached = transport.eachHop(HTTPCache())
        let plain = transport
        let request = Request.get |> url("https://api.example.com/v1/items/1")
        _ = try await cached.send(request)
        var comparison = Comparison(name: "8a. cached hit vs in-memory send, no cache", unit: "µs", target: "a few µs, no transport call")
        for _ in 0..<runs {
            let hit = try await nanosecondsPerCall(iterations: iterations) { blackHole(try await cached.send(request)) } / 1000
            let uncached = try await nanosecondsPerCall(iterations: iterations) { blackHole(try await plain.send(request)) } / 1000
            comparison.courier.append(hit)
            comparison.baseline.append(uncached)
        }
        // The same, counting what reaches a transport that records.
        let counting = InMemoryExecutor { _ in .status(200, headers: ["Cache-Control": "max-age=3600"], body: body) }
        let counted = counting.eachHop(HTTPCache())
        for _ in 0..<1001 { _ = try await counted.send(request) }
        comparison.extra = "transport calls for 1,001 sends: \(counting.requests.count)"
        return comparison
    }

    /// 8b. A revalidation (`Cache-Control: no-cache` on the request; nginx answers `304` with no
    /// body, the cache serves what it holds) against a plain GET of the same small file, over
    /// URLSession: one round trip each, microseconds per call.
    static func revalidation(base: String, runs: Int, iterations: Int) async throws -> Comparison {
        let executor = URLSessionExecutor(configuration: .ephemeral)
        let cached = executor.eachHop(HTTPCache())
        let request = Request.get |> url(base + "/small.json")
        let revalidate = request |> header("Cache-Control", "no-cache")
        let first = try await cached.send(request)
        guard first.headers[.eTag] != nil || first.headers[.lastModified] != nil else {
            throw BenchmarkError(message: "the server gave no validator")
        }
        var comparison = Comparison(name: "8b. revalidation (304, no body) vs plain GET, URLSession", unit: "µs", target: "≤ 1.1")
        var revalidated = 0
        for _ in 0..<runs {
            let check = try await nanosecondsPerCall(iterations: iterations) {
                let response = try await cached.send(revalidate)
                if response.cacheStatus == .revalidated { revalidated += 1 }
            } / 1000
            let plain = try await nanosecondsPerCall(iterations: iterations) { blackHole(try await executor.send(request)) } / 1000
            comparison.courier.append(check)
            comparison.baseline.append(plain)
        }
        comparison.extra = "\(revalidated) of \(runs * iterations) revalidated"
        return comparison
    }
}
