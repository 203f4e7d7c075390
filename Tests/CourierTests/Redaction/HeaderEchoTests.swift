import Courier
import Foundation
import Testing

/// A hostile or careless server echoes the request's own secrets in response headers (a debug
/// header, a `WWW-Authenticate` that quotes the rejected token, a `Location` or `Link` that
/// carries it, a `Content-Type` parameter). Wherever Courier shows that response with its
/// request (an error's description and dump, the response inside it, log events, a HAR file),
/// such a header shows `<redacted>`; the value stays readable.
@Suite("Redaction: secrets a server echoes in response headers")
struct HeaderEchoTests {
    /// Requests carrying a secret each way Courier knows one, and that secret.
    static let requests: [(String, Request, String)] = [
        ("a bearer token", Request.get |> baseURL(api) |> path("me") |> bearer("tok-live-0123456789"), "tok-live-0123456789"),
        ("a sensitive query value", Request.get |> baseURL(api) |> path("me") |> query("api_key", "key-live-98765"), "key-live-98765"),
        ("URL userinfo", Request.get |> baseURL("https://ada:pw-live-4242@api.example.com/v1") |> path("me"), "pw-live-4242"),
        ("a cookie value", Request.get |> baseURL(api) |> path("me") |> header("Cookie", "sid=sid-live-5555; theme=dark"), "sid-live-5555"),
        ("a header marked sensitive", Request.get |> baseURL(api) |> path("me") |> header("X-Tenant-Key", "tk-live-777", sensitive: true), "tk-live-777"),
        ("a secret outside ASCII", Request.get |> baseURL(api) |> path("me") |> bearer("päss-wört-live"), "päss-wört-live"),
    ]

    /// The headers such a server answers with, each quoting `secret`.
    static func echoingHeaders(_ secret: String) -> HTTPHeaders {
        let encoded = secret.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? secret
        return [
            "X-Debug-Authorization": "Bearer \(secret)",
            "WWW-Authenticate": #"Bearer error="invalid_token", error_description="\#(secret) expired""#,
            "Location": "https://api.example.com/v1/login?next=%2Fme&t=\(encoded)",
            "Link": "<https://api.example.com/v1/me?page=2&k=\(secret)>; rel=\"next\"",
            "Content-Type": "application/octet-stream; echo=\(secret)",
            "X-Request-Id": "req-1",
        ]
    }

    /// Every printed form of `value`.
    static func printed(_ value: Any) -> String {
        var dumped = ""
        dump(value, to: &dumped)
        return "\(value)\n\(String(reflecting: value))\n\(dumped)"
    }

    /// Whether `text` shows `secret`, as written or percent-encoded.
    static func shows(_ text: String, _ secret: String) -> Bool {
        text.contains(secret) || text.contains(secret.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? secret)
            || text.contains(secret.precomposedStringWithCanonicalMapping)
    }

    @Test(arguments: requests)
    func anErrorHidesEchoesInItsResponsesHeaders(_ label: String, _ request: Request, _ secret: String) async throws {
        let headers = Self.echoingHeaders(secret)
        let executor = InMemoryExecutor { _ in .status(401, headers: headers, body: Data([0, 1, 2])) }
        let error = await #expect(throws: CourierError.self) { try await executor.send(request |> decode([Int].self)) }
        let thrown = try #require(error)
        for text in [Self.printed(thrown), thrown.localizedDescription, Self.printed(thrown.response as Any)] {
            #expect(!Self.shows(text, secret), "\(label): \(text)")
        }
        #expect(Self.printed(thrown).contains("X-Request-Id: req-1"), "\(label): a header with no secret is shown")
        // The values stay readable: a caller parses the challenge.
        #expect(thrown.response?.headers["WWW-Authenticate"]?.contains(secret) == true, "\(label)")
    }

    @Test(arguments: requests)
    func logsHideEchoesInResponseHeaders(_ label: String, _ request: Request, _ secret: String) async throws {
        let headers = Self.echoingHeaders(secret)
        let lines = Box<[String]>([])
        let logging = LoggingMiddleware(bodies: .on(maxBytes: 1_000)) { event in
            lines.withLock { $0.append(Self.printed(event) + "\n" + Self.printed(event.response as Any) + "\n" + (event.responseBody ?? "")) }
        }
        let buffered = InMemoryExecutor { _ in .status(200, headers: headers, body: Data([0, 1, 2])) }.with(logging)
        _ = try await buffered.send(request)
        let streamed = InMemoryExecutor { _ in .stream([Data([0, 1]), Data([2])], headers: headers) }.with(logging)
        let response = try await streamed.stream(request)
        _ = try await response.body.collect(upTo: 1 << 10)
        let logged = lines.withLock { $0.joined(separator: "\n") }
        #expect(!Self.shows(logged, secret), "\(label): \(logged)")
        #expect(logged.contains("X-Request-Id: req-1"), "\(label)")
    }

    @Test(arguments: requests)
    func recordingsHideEchoesInResponseHeaders(_ label: String, _ request: Request, _ secret: String) async throws {
        var echoing = Self.echoingHeaders(secret)
        echoing.add("Set-Cookie", "n=1; Path=/\(secret)")
        let headers = echoing
        let recorder = HARRecorder()
        let redirecting = InMemoryExecutor(redirects: .refuse) { _ in .status(302, headers: headers, body: Data([0, 1, 2])) }
        _ = try await redirecting.with(recorder).send(request)
        let har = String(decoding: try recorder.har.jsonData(), as: UTF8.self)
        #expect(!Self.shows(har, secret), "\(label): \(har)")
        #expect(har.contains("req-1"), "\(label)")
    }
}
