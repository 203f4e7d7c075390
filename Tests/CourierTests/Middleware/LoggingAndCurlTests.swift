import Courier
import Foundation
import Testing

@Suite("Logging redaction and curl")
struct LoggingAndCurlTests {
    private func events(
        _ middleware: (@escaping LoggingMiddleware.Sink) -> LoggingMiddleware, stub: Stub, request: Request
    ) async throws -> [LoggingMiddleware.Event] {
        let box = Box([LoggingMiddleware.Event]())
        let executor = InMemoryExecutor { _ in stub }.with(middleware { event in box.withLock { $0.append(event) } })
        _ = try await executor.send(request)
        return box.withLock { $0 }
    }

    @Test func bodiesAreOffByDefault() async throws {
        let logged = try await events({ LoggingMiddleware(sink: $0) }, stub: .text("hello"),
            request: Request.post |> baseURL(api) |> text("body"))
        #expect(logged.allSatisfy { $0.requestBody == nil && $0.responseBody == nil })
    }

    @Test func bodiesAreCappedAndRedactedWhenOn() async throws {
        let long = String(repeating: "x", count: 100)
        let logged = try await events({ LoggingMiddleware(bodies: .on(maxBytes: 40), sink: $0) },
            stub: .json(["access_token": "RESPONSE-SECRET", "note": long]),
            request: Request.post |> baseURL(api) |> form(["user": "ada", "password": "FORM-SECRET"]))
        let request = try #require(logged.first?.requestBody)
        #expect(request == "user=ada&password=<redacted>")
        let response = try #require(logged.last?.responseBody)
        #expect(!response.contains("RESPONSE-SECRET"))
        #expect(response.hasSuffix("bytes in all)"))
        #expect(response.utf8.count < 80)
    }

    @Test func secretsCutByTheCapAreStillHidden() async throws {
        let logged = try await events({ LoggingMiddleware(bodies: .on(maxBytes: 20), sink: $0) },
            stub: .status(204), request: Request.post |> baseURL(api) |> json(["password": "ABCDEFGHIJKLMNOP"]))
        let body = try #require(logged.first?.requestBody)
        #expect(!body.contains("ABC"))
    }

    /// Logging a body looks at the cap and a margin, never the whole body: a 32 MiB body whose
    /// start is text and whose far end is not still logs as text (the end is never read), and
    /// a secret straddling the cap is hidden whole.
    @Test func onlyTheLoggedStartOfALargeBodyIsExamined() async throws {
        var body = Data(#"{"note": "start", "access_token": "CAP-STRADDLING-SECRET", "rest": ""#.utf8)
        body.append(Data(repeating: UInt8(ascii: "x"), count: 32 << 20))
        body.append(contentsOf: [0xFF, 0x00, 0xFE])  // not UTF-8, and a NUL: binary, if it were read
        let logged = try await events({ LoggingMiddleware(bodies: .on(maxBytes: 60), sink: $0) },
            stub: .status(200, headers: [.contentType: "application/json"], body: body), request: Request.get |> baseURL(api))
        let shown = try #require(logged.last?.responseBody)
        #expect(shown.hasPrefix(#"{"note": "start", "access_token": "<redacted>""#))
        #expect(!shown.contains("CAP-STRADDLING"))
        #expect(shown.hasSuffix("… (\(body.count) bytes in all)"))
        #expect(shown.utf8.count < 120)
    }

    /// The largest cap there is logs the whole body and does not overflow, buffered or streamed.
    @Test func theLargestCapIsTheWholeBody() async throws {
        for stub in [Stub.text("all of it"), .stream([Data("all of it".utf8)], headers: [.contentType: "text/plain"])] {
            let box = Box([LoggingMiddleware.Event]())
            let executor = InMemoryExecutor { _ in stub }.with(LoggingMiddleware(bodies: .on(maxBytes: .max)) { event in box.withLock { $0.append(event) } })
            let response = try await executor.stream(Request.get |> baseURL(api))
            _ = try await response.body.collect(upTo: 1 << 20)
            #expect(box.withLock { $0 }.compactMap(\.responseBody) == ["all of it"])
        }
    }

    @Test func binaryBodiesAreSummarised() async throws {
        let logged = try await events({ LoggingMiddleware(bodies: .on(maxBytes: 100), sink: $0) },
            stub: .status(200, headers: [.contentType: "image/png"], body: Data([0x89, 0x50, 0x4E, 0x47, 0x00, 0xFF])),
            request: Request.get |> baseURL(api))
        #expect(logged.last?.responseBody == "<6 bytes of binary data (image/png)>")
    }

    @Test func userListedNamesAndSetCookieAreRedacted() async throws {
        let logged = try await events(
            { LoggingMiddleware(redaction: Redaction(headers: ["X-Session"], queryNames: ["otp"]), sink: $0) },
            stub: .status(200, headers: ["Set-Cookie": "sid=COOKIE-SECRET", "X-Session": "RESP-SESSION"]),
            request: Request.get |> baseURL(api) |> header("x-session", "REQ-SESSION") |> query("OTP", "123456")
                |> header("PROXY-AUTHORIZATION", "Basic PROXY-SECRET"))
        let text = logged.map { "\($0) \(String(reflecting: $0.request)) \(String(describing: $0.responseHeaders))" }.joined()
        for secret in ["COOKIE-SECRET", "RESP-SESSION", "REQ-SESSION", "123456", "PROXY-SECRET"] {
            #expect(!text.contains(secret), "leaked \(secret)")
        }
        #expect(logged.last?.responseHeaders?["set-cookie"] == "<redacted>")
    }

    @Test func curlRendersARunnableCommand() {
        let request = Request.post |> baseURL("https://api.test/v1") |> path("users") |> query("q", "a b")
            |> header("X-Trace", "it's") |> json(["name": "Ada"])
        #expect(
            request.curl(redacting: false) == """
                curl -X 'POST' 'https://api.test/v1/users?q=a%20b' \\
                  -H 'X-Trace: it'\\''s' \\
                  -H 'Content-Type: application/json' \\
                  --data-binary '{"name":"Ada"}'
                """)
        #expect((Request.get |> baseURL("https://api.test")).curl == "curl 'https://api.test'")
        #expect((Request.head |> baseURL("https://api.test")).curl == "curl --head 'https://api.test'")
    }

    @Test func curlRedactsByDefault() {
        let request = Request.post |> baseURL("https://user:PW-SECRET@api.test") |> query("token", "Q-SECRET")
            |> bearer("B-SECRET") |> json(["password": "J-SECRET", "name": "Ada"])
        let command = request.curl
        for secret in ["PW-SECRET", "Q-SECRET", "B-SECRET", "J-SECRET"] {
            #expect(!command.contains(secret), "leaked \(secret)")
        }
        #expect(command.contains("-H 'Authorization: <redacted>'"))
        #expect(command.contains("Ada"))
        // The opt-out shows everything, for local debugging.
        #expect(request.curl(redacting: false).contains("B-SECRET"))
    }

    @Test func curlSummarisesBinaryBodies() {
        let request = Request.put |> baseURL("https://api.test") |> body(Data([0, 1, 2, 255]))
        #expect(request.curl.hasSuffix("--data-binary @body.bin  # 4 bytes of binary data, not shown"))
    }
}
