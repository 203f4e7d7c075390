import Courier
import Foundation

/// 5. Memory: a long loop of in-memory requests, and a huge streamed response under a limit.
enum MemoryBenchmarks {
    /// Resident memory after 20 k and after 100 k in-memory requests, without ever calling
    /// `reset()`: the executor keeps the latest 10 000 requests (its default recording limit).
    static func inMemoryLoop() async throws -> String {
        let body = try JSONEncoder().encode(LiveBenchmarks.Payload(id: 1, name: "x"))
        let executor = InMemoryExecutor { _ in .status(200, body: body) }
        let resource = Request.get |> baseURL("https://api.example.com") |> path("item") |> decode(LiveBenchmarks.Payload.self)
        var samples: [Int: Double] = [:]
        for index in 1...100_000 {
            blackHole(try await executor.send(resource))
            if index == 20_000 || index == 100_000 { samples[index] = residentMegabytes() ?? .nan }
        }
        let at20k = samples[20_000] ?? .nan
        let at100k = samples[100_000] ?? .nan
        return String(
            format: "| 5a. RSS after 20k / 100k in-memory requests, no reset() | %.1f MB / %.1f MB | growth %.1f MB | target: flat |",
            at20k, at100k, at100k - at20k)
    }

    /// Peak resident memory while a 1 GB response is refused at a 10 MB limit.
    static func hugeResponse(address: String) async throws -> String {
        let before = residentMegabytes(field: "VmHWM") ?? .nan
        let executor = URLSessionExecutor(configuration: .ephemeral, maximumResponseSize: 10 << 20)
        let clock = ContinuousClock()
        let start = clock.now
        var outcome = "no error (limit not enforced!)"
        do {
            _ = try await executor.send(Request.get |> url(address) |> decodeData())
        } catch {
            if case .responseTooLarge = error.cause { outcome = "responseTooLarge" } else { outcome = "\(error.cause)" }
        }
        let elapsed = clock.now - start
        let peak = residentMegabytes(field: "VmHWM") ?? .nan
        return String(
            format: "| 5b. 1 GB response, 10 MB limit | peak RSS %.1f MB (%.1f MB before) | %@ after %.2f s | target: < 64 MB |",
            peak, before, outcome, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }
}
