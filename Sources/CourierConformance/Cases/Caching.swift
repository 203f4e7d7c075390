import CourierCaching
import CourierCore
import CourierResilience
import CourierTesting
import Foundation

extension ConformanceSuite {
    /// The HTTP cache over a real transport: hits cost no round trip, revalidations one with no
    /// body, and what a hostile or odd server sends is never stored wrong.
    static let caching: [ConformanceCase] = [
        ConformanceCase("cache: a fresh response costs no round trip, a stale one a revalidation with no body") { context in
            let network = HopLog()
            let executor = context.executor(ConformanceOptions(hopMiddleware: [HTTPCache(), network]))
            // httpbin's /cache/60: Cache-Control: public, max-age=60.
            let first = try await executor.send(context.httpbin() |> path("cache", 60))
            let second = try await executor.send(context.httpbin() |> path("cache", 60))
            try context.expect(first.cacheStatus == .miss && second.cacheStatus == .hit, "statuses \(String(describing: first.cacheStatus)), \(String(describing: second.cacheStatus))")
            try context.expect(network.entries.count == 1, "\(network.entries.count) requests reached the network for a fresh response")
            try context.expect(second.body == first.body, "the hit's body differs")
            // The hostile server's validator: ETag and max-age=0, then a 304 that names a wrong length.
            let validated = context.hostile() |> path("validated") |> query("etag", "conformance")
            let original = try await executor.send(validated)
            let again = try await executor.send(validated)
            try context.expect(again.cacheStatus == .revalidated, "the second request was \(String(describing: again.cacheStatus))")
            try context.expect(network.entries.suffix(2).map(\.status) == [200, 304], "the network saw \(network.entries.map(\.status))")
            try context.expect(again.body == original.body && again.headers[.contentLength] == String(original.body.count), "the 304 changed the stored body or its length: \(again.headers[.contentLength] ?? "none")")
            try context.expect(again.headers["X-Version"] == "2", "the 304's fields were not taken")
        },
        ConformanceCase("cache: a cut body, Vary: * and an encoded body are never stored wrong") { context in
            let network = Departures()
            let executor = context.executor(ConformanceOptions(hopMiddleware: [HTTPCache(), network]))
            for _ in 0..<2 {
                let error = try await context.error { _ = try await executor.send(context.hostile() |> path("truncated") |> query("cache", 1)) }
                try context.expect(error.transportKind == .truncatedBody, "a cut body gave \(error)")
            }
            try context.expect(network.count == 2, "a cut body was served from the cache (\(network.count) requests left)")
            _ = try await executor.send(context.hostile() |> path("vary-star"))
            let star = try await executor.send(context.hostile() |> path("vary-star"))
            try context.expect(star.cacheStatus == .miss, "a Vary: * response was \(String(describing: star.cacheStatus))")
            let gzip = try await executor.send(context.hostile() |> path("gzip") |> query("cache", 1))
            let hit = try await executor.send(context.hostile() |> path("gzip") |> query("cache", 1))
            try context.expect(hit.cacheStatus == .hit && hit.body == gzip.body, "the gzip body was not served from the cache as it was decoded")
            try context.expect(hit.headers[.contentEncoding] == nil, "a decoded body was stored with Content-Encoding: \(hit.headers[.contentEncoding] ?? "")")
            try context.expect(hit.headers[.contentLength] == String(hit.body.count), "the stored length is not the body's")
        },
        ConformanceCase("cache: a response with a validator and no freshness is stored and revalidated, and a caller's own validator passes through") { context in
            let network = Departures()
            let executor = context.executor(ConformanceOptions(hopMiddleware: [HTTPCache(), network]))
            // httpbin's /etag/{etag}: an ETag, no Cache-Control, no Last-Modified; a 304 for a
            // matching If-None-Match. Stored stale, revalidated on the next request (RFC 9111 §3).
            let first = try await executor.send(context.httpbin() |> path("etag", "conformance"))
            let second = try await executor.send(context.httpbin() |> path("etag", "conformance"))
            try context.expect(first.status == 200 && first.cacheStatus == .miss, "first: \(first.status) \(String(describing: first.cacheStatus))")
            try context.expect(second.status == 200 && second.cacheStatus == .revalidated, "second: \(second.status) \(String(describing: second.cacheStatus))")
            try context.expect(second.body == first.body, "the revalidated body differs from the stored one")
            try context.expect(network.count == 2, "\(network.count) requests reached the network, not 2")
            // Nothing fresh is stored, so the caller's own conditional request goes on as it is.
            let own = try await executor.send(context.httpbin() |> path("etag", "conformance") |> header("If-None-Match", "\"conformance\""))
            try context.expect(own.status == 304 && network.count == 3, "the caller's conditional request got \(own.status)")
        },
        ConformanceCase("cache: a 304 updates the stored fields and passes its cookie on; stale-if-error answers a 503 and a closed connection") { context in
            let network = Departures()
            let executor = context.executor(ConformanceOptions(hopMiddleware: [HTTPCache(), network]))
            // The hostile server answers as each request scripts it (X-Answer, X-Answer-Fields);
            // the key keeps this run's entry apart from any other's. (A coding no transport
            // undoes is left out: URLSession on Linux refuses it, see Known limits.)
            let resource = context.hostile() |> path("scripted") |> query("key", UUID().uuidString)
            func answer(_ status: String, _ fields: String = "") -> Request { resource |> header("X-Answer", status) |> header("X-Answer-Fields", fields) }
            let rules = "Cache-Control: max-age=0, stale-if-error=600"
            let stored = try await executor.send(answer("200", "ETag: W/\"c1\" | \(rules) | X-Field: A"))
            try context.expect(stored.cacheStatus == .miss, "first: \(String(describing: stored.cacheStatus))")
            let validated = try await executor.send(
                answer("304", "ETag: \"c1\" | \(rules) | Set-Cookie: session=2 | X-Field: B"))
            try context.expect(validated.status == 200 && validated.cacheStatus == .revalidated && validated.body == stored.body, "the 304 gave \(validated.status) \(String(describing: validated.cacheStatus))")
            let fields = [validated.headers[.eTag], validated.headers["X-Field"], validated.headers[.setCookie]]
            try context.expect(fields == ["\"c1\"", "B", "session=2"], "after the 304: ETag, X-Field, Set-Cookie were \(fields)")
            for failure in ["503", "close"] {
                let answered = try await executor.send(answer(failure))
                try context.expect(
                    answered.status == 200 && answered.cacheStatus == .stale && answered.body == stored.body && answered.headers["X-Field"] == "B"
                        && answered.headers[.setCookie] == nil,
                    "for \(failure): \(answered.status) \(String(describing: answered.cacheStatus)), X-Field \(answered.headers["X-Field"] ?? "none")")
            }
            try context.expect(network.count >= 4, "\(network.count) requests reached the network, not at least 4")
        },
        ConformanceCase("cache: a streamed body is stored as it passes, and a hit streams") { context in
            let network = HopLog()
            let executor = context.executor(ConformanceOptions(hopMiddleware: [HTTPCache(), network]))
            let request = context.httpbin() |> path("response-headers") |> query("Cache-Control", "max-age=60")
            let streamed = try await executor.stream(request)
            let body = try await streamed.collect(upTo: 1 << 20).body
            let hit = try await executor.stream(request)
            try context.expect(hit.cacheStatus == .hit, "the second stream was \(String(describing: hit.cacheStatus))")
            try context.expect(try await hit.collect(upTo: 1 << 20).body == body, "the hit's body differs")
            try context.expect(network.entries.count == 1, "\(network.entries.count) requests reached the network")
        },
    ]
}

/// Counts the requests that go on to the network, whether or not an answer comes back.
final class Departures: Middleware, Sendable {
    private let sent = Locked(0)

    var count: Int { sent.withLock { $0 } }

    func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
        sent.withLock { $0 += 1 }
        return try await next(request)
    }
}
