import Courier
import Foundation
import Testing

/// The jar at work: around each hop of an exchange, over the in-memory transport and a HAR
/// replay, on a clock the test moves.
@Suite("Cookies: the middleware and the store")
struct CookieMiddlewareTests {
    /// `/login` sets a cookie on a 302 to `/home`, which echoes the Cookie it got; `/away`
    /// redirects to another host's `/home`.
    private static func site() -> InMemoryExecutor {
        InMemoryExecutor(routes: [
            .init(.get, "/login", .status(302, headers: ["Location": "/home", "Set-Cookie": "session=S3CR3T-VALUE; Path=/; HttpOnly"])),
            .init(.get, "/home") { request, _ in .text(request.headers[.cookie] ?? "none") },
            .init(.get, "/away", .status(302, headers: ["Location": "https://other.test/home"])),
            .init(.get, "/short", .status(200, headers: ["Set-Cookie": "brief=1; Max-Age=30; Path=/"])),
        ])
    }

    @Test func aCookieSetOnARedirectGoesWithTheNextHopAndStaysOnItsHost() async throws {
        let store = CookieStore()
        let transport = Self.site()
        let executor = transport.eachHop(CookieMiddleware(store))
        let home = try await executor.send(.get |> url("https://api.test/login"))
        #expect(String(decoding: home.body, as: UTF8.self) == "session=S3CR3T-VALUE")
        let away = try await executor.send(.get |> url("https://api.test/away"))
        #expect(String(decoding: away.body, as: UTF8.self) == "none")
        let mine = try await executor.send(.get |> url("https://api.test/home") |> header("Cookie", "mine=1"))
        #expect(String(decoding: mine.body, as: UTF8.self) == "mine=1; session=S3CR3T-VALUE")
        #expect(transport.requests.map { $0.headers[.cookie] } == [nil, "session=S3CR3T-VALUE", "session=S3CR3T-VALUE", nil, "mine=1; session=S3CR3T-VALUE"])
    }

    /// The README's recipe: a saved jar keeps a login's session cookie (no `Expires`) across a
    /// restart; one saved after `endingSession()` does not.
    @Test func aSavedJarKeepsTheLoginAcrossARestart() async throws {
        let before = CookieStore()
        _ = try await Self.site().eachHop(CookieMiddleware(before)).send(.get |> url("https://api.test/login"))
        let saved = try JSONEncoder().encode(before.jar)
        let forgotten = try JSONEncoder().encode(before.jar.endingSession())

        let after = CookieStore()   // a new process
        after.replace(with: try JSONDecoder().decode(CookieJar.self, from: saved))
        let home = try await Self.site().eachHop(CookieMiddleware(after)).send(.get |> url("https://api.test/home"))
        #expect(String(decoding: home.body, as: UTF8.self) == "session=S3CR3T-VALUE")

        let signedOut = CookieStore()
        signedOut.replace(with: try JSONDecoder().decode(CookieJar.self, from: forgotten))
        let away = try await Self.site().eachHop(CookieMiddleware(signedOut)).send(.get |> url("https://api.test/home"))
        #expect(String(decoding: away.body, as: UTF8.self) == "none")
    }

    @Test func aDownloadAndAStreamSendAndStoreCookiesToo() async throws {
        let store = CookieStore()
        let transport = Self.site()
        let executor = transport.eachHop(CookieMiddleware(store))
        let target = FileManager.default.temporaryDirectory.appendingPathComponent("courier-cookie-download-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: target) }
        _ = try await executor.download(.get |> url("https://api.test/login"), to: target)
        #expect(try String(decoding: Data(contentsOf: target), as: UTF8.self) == "session=S3CR3T-VALUE")
        let streamed = try await executor.stream(.get |> url("https://api.test/home"))
        #expect(String(decoding: try await streamed.body.collect(upTo: 1 << 10), as: UTF8.self) == "session=S3CR3T-VALUE")
    }

    @Test func cookiesExpireOnTheStoresClock() async throws {
        let clock = ManualClock()
        let store = CookieStore(clock: clock, start: SetCookieTests.now)
        let executor = Self.site().eachHop(CookieMiddleware(store))
        _ = try await executor.send(.get |> url("https://api.test/short"))
        #expect(store.cookieHeader(for: URL(string: "https://api.test/")!) == "brief=1")
        clock.advance(by: .seconds(29))
        #expect(store.cookieHeader(for: URL(string: "https://api.test/")!) == "brief=1")
        clock.advance(by: .seconds(1))
        let home = try await executor.send(.get |> url("https://api.test/home"))
        #expect(String(decoding: home.body, as: UTF8.self) == "none")
        #expect(store.jar.isEmpty)
    }

    @Test func oneStoreServesTwoExecutors() async throws {
        let store = CookieStore()
        let first = Self.site().eachHop(CookieMiddleware(store))
        let second = Self.site().eachHop(CookieMiddleware(store))
        _ = try await first.send(.get |> url("https://api.test/login"))
        let home = try await second.send(.get |> url("https://api.test/home"))
        #expect(String(decoding: home.body, as: UTF8.self) == "session=S3CR3T-VALUE")
    }

    @Test func aRecordingOfTheHopsHidesCookieValues() async throws {
        let store = CookieStore()
        let recorder = HARRecorder()
        let executor = Self.site().eachHop(CookieMiddleware(store), recorder)
        _ = try await executor.send(.get |> url("https://api.test/login"))
        let har = try String(decoding: JSONEncoder().encode(recorder.har), as: UTF8.self)
        #expect(recorder.har.log.entries.count == 2)
        #expect(har.contains("session"))
        #expect(!har.contains("S3CR3T-VALUE"), "\(har)")
    }

    @Test func aReplayedRecordingFillsTheJarToo() async throws {
        let recorder = HARRecorder()
        let live = Self.site().with(recorder)
        _ = try await live.send(.get |> url("https://api.test/short"))
        // A recording hides cookie values; a fixture written by hand has them.
        var har = recorder.har
        for index in har.log.entries[0].response.headers.indices where har.log.entries[0].response.headers[index].name == "Set-Cookie" {
            har.log.entries[0].response.headers[index].value = "brief=1; Max-Age=30; Path=/"
        }
        let store = CookieStore()
        let replay = HARReplayExecutor(har).with(CookieMiddleware(store))
        _ = try await replay.send(.get |> url("https://api.test/short"))
        #expect(store.jar.cookies.map(\.name) == ["brief"])
    }

    @Test func aCookieEchoedUnderItsNameIsHiddenFromTheCallsLogAndErrors() async throws {
        let echo = InMemoryExecutor(routes: [
            .init(.get, "/login", .status(200, headers: ["Set-Cookie": "session=S3CR3T-VALUE; Path=/"])),
            .init(.get, "/cookies") { request, _ in
                let value = request.headers[.cookie]?.split(separator: "=").last.map(String.init) ?? ""
                return .status(500, headers: ["Content-Type": "application/json"], body: Data(#"{"cookies": {"session": "\#(value)"}}"#.utf8))
            },
        ])
        let lines = Box([String]())
        let store = CookieStore()
        let executor = echo.eachHop(CookieMiddleware(store))
            .with(LoggingMiddleware(bodies: .on(maxBytes: 4096)) { event in lines.withLock { $0.append("\(event)") } })
        _ = try await executor.send(.get |> url("https://api.test/login"))
        var failure: CourierError?
        do {
            _ = try await executor.send(.get |> url("https://api.test/cookies") |> decode(Int.self))
        } catch {
            failure = error
        }
        #expect(failure != nil)
        let logged: [String] = lines.withLock { $0 }
        #expect(logged.joined().contains("cookies"))
        for text in logged + [failure.map { "\($0)" } ?? "", failure.map { String(reflecting: $0) } ?? ""] {
            #expect(!text.contains("S3CR3T-VALUE"), "\(text)")
        }
    }
}
