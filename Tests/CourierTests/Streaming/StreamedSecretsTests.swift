import Courier
import Foundation
import Testing

/// Secrets inside streamed bodies (server-sent events, JSON lines) never reach logs, recordings
/// or printed values, and errors built from a stream hide the request's own secrets.
@Suite("Streaming: secrets in streamed bodies")
struct StreamedSecretsTests {
    let api = "https://api.example.com"
    static let secrets = ["hunter2-pass", "tok-access-123", "cs-client-456"]

    /// The bodies a hostile or careless server streams, each carrying the three secrets.
    static let bodies: [(String, String)] = [
        ("one data line", #"data: {"password": "hunter2-pass", "access_token": "tok-access-123", "client_secret": "cs-client-456"}"# + "\n\n"),
        (
            "JSON spread over data lines",
            "event: login\ndata: {\ndata:   \"password\": \"hunter2-pass\",\ndata:   \"access_token\":\ndata:     \"tok-access-123\",\ndata:   \"client_secret\": \"cs-client-456\"\ndata: }\n\n"
        ),
        ("a comment first, CRLF lines", ": hello\r\ndata: {\"password\":\"hunter2-pass\"}\r\n\r\ndata: {\"access_token\":\"tok-access-123\",\"client_secret\":\"cs-client-456\"}\r\n\r\n"),
        (
            "JSON lines",
            #"{"n":1,"password":"hunter2-pass"}"# + "\n" + #"{"n":2,"access_token":"tok-access-123"}"# + "\n" + #"{"n":3,"client_secret":"cs-client-456"}"# + "\n"
        ),
        ("text, then JSON on a later line", "starting\n" + #"{"password":"hunter2-pass","access_token":"tok-access-123","client_secret":"cs-client-456"}"#),
        // `:` and a combining mark are one Character: a reader of bytes sees a data line, so the
        // redactor must too.
        (
            "a combining mark after a field's colon",
            "event:\u{301} login\ndata:\u{301}{\"password\": \"hunter2-pass\", \"access_token\": \"tok-access-123\", \"client_secret\": \"cs-client-456\"}\n\n"
        ),
    ]

    static func streamed(_ body: String, type: String) -> InMemoryExecutor {
        let bytes = Data(body.utf8)
        // Delivered in small pieces, so no chunk holds a whole secret.
        let chunks = stride(from: 0, to: bytes.count, by: 7).map { bytes[$0..<min($0 + 7, bytes.count)] }.map { Data($0) }
        return InMemoryExecutor { _ in .stream(chunks, headers: [.contentType: type]) }
    }

    @Test(arguments: bodies)
    func logsOfStreamedBodiesHideSecrets(_ label: String, _ body: String) async throws {
        let lines = Box<[String]>([])
        let logging = LoggingMiddleware(bodies: .on(maxBytes: 10_000)) { event in lines.withLock { $0.append("\(event) \(event.responseBody ?? "")") } }
        let executor = Self.streamed(body, type: label.contains("lines") ? "application/x-ndjson" : "text/event-stream").with(logging)
        let response = try await executor.stream(.get |> url(api + "/events"))
        _ = try await response.body.collect(upTo: 1 << 20)
        let logged = lines.withLock { $0.joined(separator: "\n") }
        #expect(logged.contains("<redacted>"), "\(label)")
        for secret in Self.secrets { #expect(!logged.contains(secret), "\(label): \(secret)") }
    }

    @Test(arguments: bodies)
    func recordingsOfStreamedBodiesHideSecrets(_ label: String, _ body: String) async throws {
        let recorder = HARRecorder()
        let executor = Self.streamed(body, type: "text/event-stream").with(recorder)
        let response = try await executor.stream(.get |> url(api + "/events"))
        _ = try await response.body.collect(upTo: 1 << 20)
        let har = String(decoding: try JSONEncoder().encode(recorder.har), as: UTF8.self)
        for secret in Self.secrets { #expect(!har.contains(secret), "\(label): \(secret)") }
    }

    @Test func aSecretThatStraddlesTheStreamedLogCapIsHidden() async throws {
        for cap in 20..<60 {
            let lines = Box<[String]>([])
            let logging = LoggingMiddleware(bodies: .on(maxBytes: cap)) { event in
                if let body = event.responseBody { lines.withLock { $0.append(body) } }
            }
            let body = #"data: {"note": "x", "password": "hunter2-pass-long-value"}"# + "\n\n" + String(repeating: "data: more\n\n", count: 50)
            let executor = Self.streamed(body, type: "text/event-stream").with(logging)
            let response = try await executor.stream(.get |> url(api + "/events"))
            _ = try await response.body.collect(upTo: 1 << 20)
            let logged = lines.withLock { $0.joined() }
            #expect(!logged.contains("hunter"), "cap \(cap): \(logged)")
        }
    }

    @Test func aRequestSecretEchoedAcrossTheLogCapIsNotShownInPart() async throws {
        let token = "bearer-token-0123456789abcdef"
        for cap in 10..<40 {
            let lines = Box<[String]>([])
            let logging = LoggingMiddleware(bodies: .on(maxBytes: cap)) { event in
                if let body = event.responseBody { lines.withLock { $0.append(body) } }
            }
            let body = "you sent " + token + " " + String(repeating: "padding ", count: 1_000)
            let executor = Self.streamed(body, type: "text/plain").with(logging)
            let response = try await executor.stream(.get |> url(api + "/echo") |> bearer(token))
            _ = try await response.body.collect(upTo: 1 << 20)
            let logged = lines.withLock { $0.joined() }
            #expect(!logged.contains("bearer-tok"), "cap \(cap): \(logged)")
        }
    }

    @Test func anEventHidesJSONSecretsOnLaterDataLines() {
        let event = ServerSentEvent(data: "progress 50%\n{\"password\": \"hunter2-pass\", \"access_token\": \"tok-access-123\"}\nclient_secret=cs-client-456")
        var dumped = ""
        dump(event, to: &dumped)
        for text in [event.description, dumped, String(reflecting: event)] {
            for secret in Self.secrets { #expect(!text.contains(secret), "\(secret) in \(text)") }
        }
    }

    @Test func anErrorFromValidatingAStreamHidesTheRequestsSecrets() async throws {
        // A 500 page that reflects every header the client sent.
        let executor = InMemoryExecutor { request in
            let echoed = request.headers.map { "\($0.name.rawValue): \($0.value)" }.joined(separator: "\n")
            return .stream([Data(echoed.utf8)], status: 500, headers: [.contentType: "text/plain"])
        }
        var request = Request.get |> url(api + "/boom") |> bearer("bear-secret-111")
            |> header(.proxyAuthorization, "Basic cHJveHktc2VjcmV0") |> header("X-API-Key", "apikey-secret-222")
            |> header("X-Session-Ticket", "ticket-secret-333")
        request.headers.markSensitive("X-Session-Ticket")
        let response = try await executor.stream(request)
        let error = await expectCourierError { _ = try await response.validated() }
        let thrown = try #require(error)
        var dumped = ""
        dump(thrown, to: &dumped)
        for text in [thrown.description, dumped, thrown.localizedDescription, String(reflecting: thrown)] {
            for secret in ["bear-secret-111", "cHJveHktc2VjcmV0", "apikey-secret-222", "ticket-secret-333"] {
                #expect(!text.contains(secret), "\(secret) shown")
            }
        }
    }
}
