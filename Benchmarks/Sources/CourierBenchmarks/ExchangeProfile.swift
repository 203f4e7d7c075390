import Courier
import Foundation

extension InstructionProfiles {
    /// A whole `send` through the exchange, in memory, awaited `count` times one after another:
    /// the front door's validation, the exchange's hop (with a timeout, as servers configure it:
    /// the idle timer and the hop's task), the in-memory transport's answer, the body collected
    /// and decoded. Not an instruction row: valgrind cannot run the async runtime here. Time it:
    /// `/usr/bin/time -f "%U %S" CourierBenchmarks --profile exchange-timeout --count 100000`.
    static func exchange(count: Int, timed: Bool) async throws {
        let body = try JSONEncoder().encode([Item(id: 1, name: "one"), Item(id: 2, name: "two")])
        let executor = InMemoryExecutor(routes: [
            .init(.get, "/items", .status(200, headers: [.contentType: "application/json"], body: body))
        ])
        for page in 0..<count {
            var request = Request.get |> url("https://api.test/items") |> query("page", page)
            if timed { request = request |> timeout(30) }
            blackHole(try await executor.send(request |> decode([Item].self)))
        }
    }
}
