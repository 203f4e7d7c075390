import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Calls cancelled as their redirect arrives, on the URLSession transport, against the local
/// httpbin: FoundationNetworking takes the delegate's answer to a redirect on its work queue after
/// the delegate returns, and a cancel processed there first trapped it (seen once in CI: the
/// process ended with "Received callback for HTTP redirection, but we're not waiting for it").
/// Each call is cancelled after a delay spread around the moment its 302 comes back (measured
/// first, on this machine), many at once, in a bounded loop; each must end as a cancellation or
/// as the redirect followed, and the process must live.
@Suite("Integration: cancelled as the redirect arrives", .serialized)
struct RedirectCancellationTests {
    @Test func callsCancelledAsTheirRedirectArrivesEndCleanly() async throws {
        let executor = URLSessionExecutor(configuration: .ephemeral)
        let redirect = try HTTPBin.request() |> path("redirect-to") |> query("url", "/get")
        // When a 302 comes back here: the median of a few uncancelled calls (followed, so twice
        // that ends the call).
        let clock = ContinuousClock()
        var samples: [Duration] = []
        for _ in 0..<5 {
            let start = clock.now
            _ = try await executor.send(redirect |> timeout(10))
            samples.append(clock.now - start)
        }
        let hop = samples.sorted()[samples.count / 2] / 2
        var outcomes: [String] = []
        // 400 calls, 16 at a time.
        for batch in 0..<25 {
            let ended = await withTaskGroup(of: String.self) { group in
                for slot in 0..<16 {
                    let index = batch * 16 + slot
                    group.addTask {
                        // Spread from a quarter of a hop to twice one, in 400 steps.
                        let delay = hop / 4 + hop * 7 / 4 * (Double(index) / 400)
                        let call = Task { try await executor.send(redirect |> timeout(10)) }
                        try? await Task.sleep(for: delay)
                        call.cancel()
                        switch await call.result {
                        case .success(let response): return response.status == 200 ? "followed" : "status \(response.status)"
                        case .failure(let error as CourierError):
                            if case .cancelled = error.cause { return "cancelled" }
                            return "failed: \(error)"
                        case .failure(let error): return "failed: \(error)"
                        }
                    }
                }
                return await group.reduce(into: [String]()) { $0.append($1) }
            }
            outcomes += ended.filter { $0 != "followed" && $0 != "cancelled" }
        }
        #expect(outcomes.isEmpty, "calls ended otherwise: \(outcomes.prefix(5))")
    }
}
