import CourierCore
import CourierResilience
import CourierTesting
import Foundation

extension ConformanceSuite {
    /// Per-hop middleware: it sees every hop of a redirect chain, as the hop goes out.
    static let hops: [ConformanceCase] = [
        ConformanceCase("hops: per-hop middleware sees every hop, with credentials already dropped once the chain leaves the origin") {
            context in
            let hops = HopLog()
            let calls = HopLog()
            let executor = context.executor(ConformanceOptions(hopMiddleware: [hops])).with(calls)
            // Two hops on the origin, then one to the other origin.
            let target = context.servers.otherOrigin + "/headers"
            let second = "/redirect-to?url=" + (target.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
            let echo = try await executor.send(
                context.httpbin() |> path("redirect-to") |> query("url", second) |> bearer("HOP-SECRET")
                    |> header("Cookie", "hop=COOKIE") |> decode(EchoedHeaders.self))
            try context.expect(echo.headers["Authorization"] == nil, "the credential reached the other origin")
            let seen = hops.entries
            try context.expect(seen.count == 3, "the hop middleware saw \(seen.count) hops, not 3: \(seen)")
            try context.expect(seen.map(\.status) == [302, 302, 200], "hop statuses \(seen.map(\.status))")
            try context.expect(seen.map(\.hop) == [0, 1, 2], "Exchange.currentHop in the hop middleware: \(seen.map(\.hop))")
            try context.expect(
                seen.prefix(2).allSatisfy { $0.authorization == "Bearer HOP-SECRET" && $0.cookie == "hop=COOKIE" },
                "a hop on the origin lost its credentials: \(seen)")
            try context.expect(
                seen.last?.authorization == nil && seen.last?.cookie == nil,
                "the hop that left the origin still carried credentials when the hop middleware saw it: \(seen)")
            try context.expect(seen.last?.url.hasPrefix(context.servers.otherOrigin + "/headers") == true, "last hop went to \(seen.last?.url ?? "")")
            try context.expect(calls.entries.count == 1, "per-call middleware saw \(calls.entries.count) calls, not 1")
            try context.expect(calls.entries.first?.status == 200, "per-call middleware saw \(calls.entries.first?.status ?? 0)")
        },
        ConformanceCase("hops: a hop middleware's change to a hop is what goes out, and a refused redirect is a hop too") { context in
            let hops = HopLog()
            let executor = context.executor(ConformanceOptions(redirects: .refuse, hopMiddleware: [hops, AddHeader()]))
            let response = try await executor.send(context.httpbin() |> path("redirect-to") |> query("url", "/get"))
            try context.expect(response.status == 302, "refused redirect ended with \(response.status)")
            try context.expect(hops.entries.map(\.status) == [302], "hops \(hops.entries)")
            let follows = context.executor(ConformanceOptions(hopMiddleware: [AddHeader()]))
            let echo = try await follows.send(
                context.httpbin() |> path("redirect-to") |> query("url", "/headers") |> decode(EchoedHeaders.self))
            try context.expect(echo.headers["X-Hop"] == "added", "the header a hop middleware added did not go out on the last hop")
        },
    ]
}

/// Records each request it passes on and the status that came back.
final class HopLog: Middleware, @unchecked Sendable {
    // `@unchecked Sendable` is sound: the list is read and written only while the lock is held.
    struct Entry: Sendable, CustomStringConvertible {
        var url: String
        var authorization: String?
        var cookie: String?
        var status: Int
        /// ``Exchange/currentHop`` as the middleware saw it.
        var hop: Int
        var description: String { "\(status) \(url) hop:\(hop) auth:\(authorization != nil) cookie:\(cookie != nil)" }
    }

    private let lock = NSLock()
    private var list: [Entry] = []

    var entries: [Entry] {
        lock.lock()
        defer { lock.unlock() }
        return list
    }

    func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
        let response = try await next(request)
        let entry = Entry(
            url: (try? request.validatedURL().absoluteString) ?? "", authorization: request.headers[.authorization],
            cookie: request.headers[.cookie], status: response.status, hop: Exchange.currentHop)
        record(entry)
        return response
    }

    private func record(_ entry: Entry) {
        lock.lock()
        defer { lock.unlock() }
        list.append(entry)
    }
}

/// Adds `X-Hop: added` to every request it passes on.
struct AddHeader: Middleware {
    func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
        try await next(request |> header("X-Hop", "added"))
    }
}
