import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

struct NewUser: Codable, Sendable {
    var name: String
    var email: String
}

struct Item: Codable, Sendable {
    var id: Int
    var name: String
}

enum BuildBenchmarks {
    static let base = "https://api.example.com/v1"
    static let foundationBase = URL(string: base)
    /// The API's base, defined once as an app would (`let api = baseURL(...)`), as the twins'
    /// base `URL` is parsed once.
    static let api = baseURL(base)
    static let user = NewUser(name: "Ada Lovelace", email: "ada@example.com")

    /// 1. Ten combinators, rendered, vs the same URLRequest written by hand with URLComponents.
    static func courierBuild(_ id: Int, encoder: JSONEncoder) throws -> URLRequest {
        let request = Request.post |> api |> path("users") |> path(id) |> query("page", 2) |> query("limit", 50)
            |> query("q", "swift lang") |> header("X-Trace", "abc123") |> accept(.json) |> bearer("token-123")
            |> json(user, encoder: encoder)
        return try request.urlRequest()
    }

    static func handBuild(_ id: Int, encoder: JSONEncoder) throws -> URLRequest {
        guard let foundationBase, var components = URLComponents(url: foundationBase, resolvingAgainstBaseURL: false) else {
            throw URLError(.badURL)
        }
        components.path += "/users/\(id)"
        components.queryItems = [
            URLQueryItem(name: "page", value: "2"), URLQueryItem(name: "limit", value: "50"),
            URLQueryItem(name: "q", value: "swift lang"),
        ]
        guard let url = components.url else { throw URLError(.badURL) }
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("abc123", forHTTPHeaderField: "X-Trace")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.setValue("Bearer token-123", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try encoder.encode(user)
        return request
    }

    /// The strongest hand-written twin on Linux: the same request, with the headers set in one
    /// `allHTTPHeaderFields` assignment (FoundationNetworking's `setValue` searches the existing
    /// fields case-insensitively on every call).
    static func handBuildDictionary(_ id: Int, encoder: JSONEncoder) throws -> URLRequest {
        guard let foundationBase, var components = URLComponents(url: foundationBase, resolvingAgainstBaseURL: false) else {
            throw URLError(.badURL)
        }
        components.path += "/users/\(id)"
        components.queryItems = [
            URLQueryItem(name: "page", value: "2"), URLQueryItem(name: "limit", value: "50"),
            URLQueryItem(name: "q", value: "swift lang"),
        ]
        guard let url = components.url else { throw URLError(.badURL) }
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.allHTTPHeaderFields = [
            "X-Trace": "abc123", "Accept": "application/json", "Authorization": "Bearer token-123",
            "Content-Type": "application/json",
        ]
        request.httpBody = try encoder.encode(user)
        return request
    }

    /// 1b. The same build against the header-dictionary twin.
    static func buildAgainstDictionary(runs: Int, iterations: Int) throws -> Comparison {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let a = try courierBuild(7, encoder: encoder)
        let b = try handBuildDictionary(7, encoder: encoder)
        guard a.url == b.url, a.httpBody == b.httpBody, a.allHTTPHeaderFields == b.allHTTPHeaderFields else {
            throw BenchmarkError(message: "build benchmark twins differ")
        }
        var comparison = Comparison(name: "1b. build + render vs the header-dictionary twin", unit: "ns", target: "≤ 1.0")
        for run in 0..<runs {
            let courier = try nanosecondsPerCall(iterations: iterations) { blackHole(try courierBuild(run, encoder: encoder)) }
            let hand = try nanosecondsPerCall(iterations: iterations) { blackHole(try handBuildDictionary(run, encoder: encoder)) }
            comparison.courier.append(courier)
            comparison.baseline.append(hand)
        }
        return comparison
    }

    static func build(runs: Int, iterations: Int) throws -> Comparison {
        let encoder = JSONEncoder()
        // Key order is not stable between encodes on Linux without this.
        encoder.outputFormatting = .sortedKeys
        // The two must produce the same request.
        let a = try courierBuild(7, encoder: encoder)
        let b = try handBuild(7, encoder: encoder)
        guard a.url == b.url, a.httpBody == b.httpBody, a.allHTTPHeaderFields == b.allHTTPHeaderFields else {
            throw BenchmarkError(message: "build benchmark twins differ: \(String(describing: a.url)) vs \(String(describing: b.url))")
        }
        var comparison = Comparison(name: "1a. build + render vs the setValue twin", unit: "ns", target: "≤ 1.0")
        for run in 0..<runs {
            let courier = try nanosecondsPerCall(iterations: iterations) { blackHole(try courierBuild(run, encoder: encoder)) }
            let hand = try nanosecondsPerCall(iterations: iterations) { blackHole(try handBuild(run, encoder: encoder)) }
            comparison.courier.append(courier)
            comparison.baseline.append(hand)
        }
        return comparison
    }

    /// 2. Build → InMemoryExecutor → decode vs build by hand + decode.
    static func inMemory(runs: Int, iterations: Int) async throws -> Comparison {
        let body = try JSONEncoder().encode([Item(id: 1, name: "one"), Item(id: 2, name: "two")])
        let executor = InMemoryExecutor { _ in .status(200, headers: [.contentType: "application/json"], body: body) }
        let decoder = JSONDecoder()
        var comparison = Comparison(name: "2. in-memory send + decode", unit: "ns", target: "≤ 1.1")
        for run in 0..<runs {
            executor.reset()
            let courier = try await nanosecondsPerCall(iterations: iterations) {
                let resource = Request.get |> api |> path("items") |> query("page", run) |> bearer("t")
                    |> decode([Item].self, decoder: decoder)
                blackHole(try await executor.send(resource))
            }
            executor.reset()
            let hand = try nanosecondsPerCall(iterations: iterations) {
                guard let foundationBase, var components = URLComponents(url: foundationBase, resolvingAgainstBaseURL: false) else { return }
                components.path += "/items"
                components.queryItems = [URLQueryItem(name: "page", value: String(run))]
                guard let url = components.url else { return }
                var request = URLRequest(url: url)
                request.setValue("Bearer t", forHTTPHeaderField: "Authorization")
                blackHole(request)
                blackHole(try decoder.decode([Item].self, from: body))
            }
            comparison.courier.append(courier)
            comparison.baseline.append(hand)
        }
        executor.reset()
        return comparison
    }
}

struct BenchmarkError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

extension BuildBenchmarks {
    /// Logging a body costs what is logged: a 1 KiB log of a 32 MiB response against the same
    /// log of an 8 KiB one, both answered from memory (row 2b).
    static func loggedBody(runs: Int, iterations: Int) async throws -> Comparison {
        func executor(bodySize: Int) -> some Executor {
            var body = Data(#"{"access_token": "SECRET", "items": ""#.utf8)
            body.append(Data(repeating: UInt8(ascii: "x"), count: bodySize))
            body.append(Data(#""}"#.utf8))
            let whole = body
            let logging = LoggingMiddleware(bodies: .on(maxBytes: 1024)) { blackHole($0.responseBody) }
            return InMemoryExecutor { _ in .status(200, headers: [.contentType: "application/json"], body: whole) }.with(logging)
        }
        let large = executor(bodySize: 32 << 20)
        let small = executor(bodySize: 8 << 10)
        let request = Request.get |> api |> path("items")
        var comparison = Comparison(name: "2b. log 1 KiB of a 32 MiB body vs of an 8 KiB one (in-memory send)", unit: "µs", target: "≤ 1.1")
        for _ in 0..<runs {
            let courier = try await nanosecondsPerCall(iterations: iterations) { blackHole(try await large.send(request)) }
            let baseline = try await nanosecondsPerCall(iterations: iterations) { blackHole(try await small.send(request)) }
            comparison.courier.append(courier / 1000)
            comparison.baseline.append(baseline / 1000)
        }
        return comparison
    }
}
