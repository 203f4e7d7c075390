import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Synchronous workloads for `valgrind --tool=callgrind`, which counts instructions the same
/// way on every run however busy the machine is. (Valgrind 3.19 cannot follow the threads the
/// Swift concurrency runtime starts, so the async executor hop is timed, not counted.)
enum InstructionProfiles {
    static let kinds = ["build", "build-hand", "build-hand-dict", "pipeline", "pipeline-hand", "live", "live-hand", "cookie-header", "cookie-store"]

    static func run(_ kind: String, count: Int) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let decoder = JSONDecoder()
        let body = try JSONEncoder().encode([Item(id: 1, name: "one"), Item(id: 2, name: "two")])
        switch kind {
        case "build":
            for index in 0..<count { blackHole(try BuildBenchmarks.courierBuild(index, encoder: encoder)) }
        case "build-hand":
            for index in 0..<count { blackHole(try BuildBenchmarks.handBuild(index, encoder: encoder)) }
        case "build-hand-dict":
            for index in 0..<count { blackHole(try BuildBenchmarks.handBuildDictionary(index, encoder: encoder)) }
        case "live", "live-hand":
            // The synchronous part of one live small-JSON request, around the transport: what
            // `send` does before and after `data(for:)` (validate, render, wrap the response,
            // check the status, decode), against the hand-written client's status check and decode.
            // The response's headers are converted only when read (this decoder never does).
            let resource = Request.get |> baseURL(BuildBenchmarks.base) |> path("small.json") |> decode(LiveBenchmarks.Payload.self)
            let payload = try JSONEncoder().encode(LiveBenchmarks.Payload(id: 1, name: "Ada Lovelace, the first programmer"))
            guard let url = URL(string: BuildBenchmarks.base + "/small.json"),
                let http = HTTPURLResponse(
                    url: url, statusCode: 200, httpVersion: "HTTP/1.1",
                    headerFields: [
                        "Content-Type": "application/json", "Content-Length": "\(payload.count)", "Server": "nginx/1.22.1",
                        "Date": "Mon, 23 Nov 2026 03:00:00 GMT", "Connection": "keep-alive", "ETag": "\"6561-60\"",
                        "Last-Modified": "Mon, 23 Nov 2026 02:00:00 GMT", "Accept-Ranges": "bytes",
                    ])
            else { throw URLError(.badURL) }
            let prebuilt = URLRequest(url: url)
            if kind == "live" {
                for _ in 0..<count {
                    try resource.request.validate()
                    blackHole(try resource.request.urlRequest())
                    blackHole(try resource.decode(Response(http: http, body: payload)))
                }
            } else {
                for _ in 0..<count {
                    blackHole(prebuilt)
                    guard (200..<300).contains(http.statusCode) else { throw URLError(.badServerResponse) }
                    blackHole(try decoder.decode(LiveBenchmarks.Payload.self, from: payload))
                }
            }
        case "cookie-header":
            // Row 9b's call: the `Cookie` field for a host with 50 cookies in a 3,000-cookie jar.
            var now = Date(timeIntervalSince1970: 1_800_000_000)
            var (jar, url) = try CookieBenchmarks.hostJar(alone: false, now: now)
            for _ in 0..<count {
                now += 0.001
                blackHole(jar.cookieHeader(for: url, at: now))
            }
        case "cookie-store":
            // Row 9c's call: a store replacing one of those 50.
            var now = Date(timeIntervalSince1970: 1_800_000_000)
            var (jar, url) = try CookieBenchmarks.hostJar(alone: false, now: now)
            for index in 0..<count {
                now += 0.001
                jar.store(setCookie: ["c\(index % 50)=refreshed-\(index); Max-Age=86400; Path=/; Secure; HttpOnly"], from: url, at: now)
            }
            blackHole(jar.count)
        case "pipeline":
            for index in 0..<count { blackHole(try courierPipeline(index, body: body, decoder: decoder)) }
        case "pipeline-hand":
            for index in 0..<count { blackHole(try handPipeline(index, body: body, decoder: decoder)) }
        default:
            throw BenchmarkError(message: "unknown profile \(kind); one of \(kinds.joined(separator: ", "))")
        }
    }

    /// What `InMemoryExecutor.send` does, without the async hop: build, validate, render the
    /// URL, make the stubbed response, check and decode it.
    static func courierPipeline(_ page: Int, body: Data, decoder: JSONDecoder) throws -> [Item] {
        let resource = Request.get |> BuildBenchmarks.api |> path("items") |> query("page", page)
            |> bearer("t") |> decode([Item].self, decoder: decoder)
        try resource.request.validate()
        var response = Response(status: 200, headers: [.contentType: "application/json"], body: body)
        response.url = try resource.request.validatedURL()
        return try resource.decode(response)
    }

    /// The hand-written twin of ``courierPipeline(_:body:decoder:)``.
    static func handPipeline(_ page: Int, body: Data, decoder: JSONDecoder) throws -> [Item] {
        guard let base = BuildBenchmarks.foundationBase,
            var components = URLComponents(url: base, resolvingAgainstBaseURL: false)
        else { throw URLError(.badURL) }
        components.path += "/items"
        components.queryItems = [URLQueryItem(name: "page", value: String(page))]
        guard let url = components.url else { throw URLError(.badURL) }
        var request = URLRequest(url: url)
        request.setValue("Bearer t", forHTTPHeaderField: "Authorization")
        blackHole(request)
        return try decoder.decode([Item].self, from: body)
    }
}
