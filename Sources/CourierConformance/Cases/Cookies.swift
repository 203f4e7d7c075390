import CourierCookies
import CourierCore
import CourierResilience
import CourierTesting
import Foundation

extension ConformanceSuite {
    /// Cookies: only Courier's jar keeps them, it sees every hop, and what a server may not set
    /// is refused the same way on every transport.
    static let cookies: [ConformanceCase] = [
        ConformanceCase("cookies: a transport keeps no cookies of its own") { context in
            let executor = context.executor(ConformanceOptions(redirects: .refuse))
            let set = try await executor.send(context.httpbin() |> path("cookies/set") |> query("courier", "TRANSPORT-KEPT"))
            try context.expect(set.headers.values(for: .setCookie).contains { $0.hasPrefix("courier=") }, "httpbin set no cookie: \(set.status)")
            let echo = try await executor.send(context.httpbin() |> path("cookies") |> decode(EchoedCookies.self))
            try context.expect(echo.cookies.isEmpty, "the transport sent back cookies no jar holds: \(echo.cookies.keys.sorted())")
        },
        ConformanceCase("cookies: a Set-Cookie on a redirect counts for the next hop, and each hop gets its own URL's cookies") { context in
            let store = CookieStore()
            let executor = context.executor(ConformanceOptions(hopMiddleware: [CookieMiddleware(store)]))
            // `/cookies/set` answers 302 with the cookie, to `/cookies`, which echoes what came.
            let first = try await executor.send(
                context.httpbin() |> path("cookies/set") |> query("session", "HOP-COOKIE") |> decode(EchoedCookies.self))
            try context.expect(first.cookies == ["session": "HOP-COOKIE"], "the hop after the 302 got \(first.cookies.keys.sorted())")
            // A user's own Cookie field is kept, the jar's added to it.
            let both = try await executor.send(
                context.httpbin() |> path("cookies") |> header("Cookie", "mine=1") |> decode(EchoedCookies.self))
            try context.expect(both.cookies == ["mine": "1", "session": "HOP-COOKIE"], "with a Cookie of the caller's: \(both.cookies.keys.sorted())")
            // To the other origin: the jar has nothing for it.
            let target = context.servers.otherOrigin + "/cookies"
            let other = try await executor.send(
                context.httpbin() |> path("redirect-to") |> query("url", target) |> decode(EchoedCookies.self))
            try context.expect(other.cookies.isEmpty, "the other origin received \(other.cookies.keys.sorted())")
            // Through `stream`: the same jar, the same rules.
            let streamed = try await executor.stream(
                context.httpbin() |> path("response-headers") |> query("Set-Cookie", "streamed=1; Path=/"))
            _ = try await streamed.collect(upTo: 1 << 20)
            let after = try await executor.send(context.httpbin() |> path("cookies") |> decode(EchoedCookies.self))
            try context.expect(after.cookies == ["session": "HOP-COOKIE", "streamed": "1"], "after a streamed response: \(after.cookies.keys.sorted())")
            let kept = store.jar.cookies
            try context.expect(kept.allSatisfy { $0.hostOnly && !$0.domain.isEmpty }, "stored: \(kept)")
            try context.expect(!"\(store)".contains("HOP-COOKIE"), "the store's description shows a value")
        },
        ConformanceCase("cookies: a Secure cookie from a loopback origin is kept and sent back, over http too") { context in
            // RFC 6265bis counts loopback as a secure origin, so a development server on
            // http://127.0.0.1 keeps its Secure cookies. (That a Secure cookie never goes to a
            // plain http origin elsewhere is the jar's rule alone, shown without a network in
            // CourierTests: every test server here is on loopback.)
            let store = CookieStore()
            let executor = context.executor(ConformanceOptions(hopMiddleware: [CookieMiddleware(store)]))
            let set = try await executor.send(
                context.httpbin() |> path("response-headers") |> query("Set-Cookie", "guarded=1; Secure; Path=/")
                    |> query("Set-Cookie", "open=2; Path=/"))
            try context.expect(set.status == 200, "response-headers answered \(set.status)")
            let names = store.jar.cookies.map(\.name).sorted()
            try context.expect(names == ["guarded", "open"], "stored \(names)")
            // The hostile server is plain http on the same host as httpbin.
            let echo = try await executor.send(context.hostile() |> path("echo") |> decode(EchoedRequest.self))
            let sent = echo.headers.first { $0.key.lowercased() == "cookie" }?.value ?? ""
            try context.expect(sent == "guarded=1; open=2", "plain http on loopback received the Cookie field \(sent.isEmpty ? "(none)" : sent)")
        },
        ConformanceCase("cookies: what a server may not set is refused, a flood is bounded, and the rest is kept") { context in
            let store = CookieStore()
            let executor = context.executor(ConformanceOptions(hopMiddleware: [CookieMiddleware(store)]))
            // 212 Set-Cookie fields (URLSession joins them with commas; a date has one): 200 for
            // this host, another site's, a public suffix, Secure over http on loopback (kept:
            // loopback is a secure origin), oversized, a name that is not a token, two nameless
            // values (kept, RFC 6265bis: the second replaces the first), then good=1 and plain=2.
            let response = try await executor.send(context.hostile() |> path("set-cookies"))
            try context.expect(response.status == 200, "set-cookies answered \(response.status)")
            let names = Set(store.jar.cookies.map(\.name))
            try context.expect(names.count == 50, "the jar kept \(names.count) cookies for one host, not 50")
            try context.expect(names.isSuperset(of: ["good", "plain", "secure", ""]), "the good cookies after the flood were not kept: \(names.sorted())")
            let refused = ["evil", "suffix", "other", "__Host-prefixed", "big", "huge", "spaced name"]
            try context.expect(names.isDisjoint(with: refused), "kept what must be refused: \(names.intersection(refused).sorted())")
            try context.expect(names.contains("flood199") && !names.contains("flood0"), "the oldest flood cookies were not the ones evicted")
            let echo = try await executor.send(context.hostile() |> path("echo") |> decode(EchoedRequest.self))
            let sent = echo.headers.first { $0.key.lowercased() == "cookie" }?.value ?? ""
            let pairs = Set(sent.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) })
            try context.expect(pairs.count == 50 && pairs.isSuperset(of: ["good=1", "plain=2", "noequals"]), "sent back \(pairs.count) cookies")
            // httpbin deletes with an expiry in the past. (A fresh jar: cookies are not kept
            // apart by port, and httpbin shares the hostile server's host.)
            let fresh = context.executor(ConformanceOptions(hopMiddleware: [CookieMiddleware(CookieStore())]))
            let set = try await fresh.send(
                context.httpbin() |> path("cookies/set") |> query("gone", "1") |> query("kept", "2") |> decode(EchoedCookies.self))
            try context.expect(set.cookies == ["gone": "1", "kept": "2"], "httpbin got \(set.cookies.keys.sorted())")
            let deleted = try await fresh.send(
                context.httpbin() |> path("cookies/delete") |> query("gone", "") |> decode(EchoedCookies.self))
            try context.expect(deleted.cookies == ["kept": "2"], "after a delete: \(deleted.cookies.keys.sorted())")
        },
    ]
}

/// What the hostile server's `/echo` echoes.
struct EchoedRequest: Decodable, Sendable {
    var path: String
    var headers: [String: String]
}

/// What httpbin's `/cookies` echoes.
struct EchoedCookies: Decodable, Sendable {
    var cookies: [String: String]
}
