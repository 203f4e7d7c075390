import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Every way a value can be printed (descriptions, `dump`, mirrors, errors, logs, HAR files,
/// curl, decoding snippets) keeps secrets hidden.
@Suite("Secrets stay secret")
struct SecretsTests {
    static let secrets = [
        "TOKEN-abc123", "COOKIE-v4lue", "KEY-9f8e7d", "PW-hunter2", "QS-s3cr3t", "PROXY-cr3d", "CUSTOM-x1y2",
        "SETCOOKIE-zz99",
    ]

    private let request = Request.post
        |> url("https://user:PW-hunter2@api.test/v1/items?access_token=QS-s3cr3t&page=2")
        |> bearer("TOKEN-abc123")
        |> header(.cookie, "session=COOKIE-v4lue; theme=dark")
        |> apiKey("KEY-9f8e7d")
        |> header(.proxyAuthorization, "Basic PROXY-cr3d")
        |> header("X-Tenant-Secret-Ref", "CUSTOM-x1y2", sensitive: true)
        |> body(Data("payload".utf8), contentType: "text/plain")

    private let response = Response(
        status: 200,
        headers: ["Set-Cookie": "sid=SETCOOKIE-zz99; HttpOnly", "Content-Type": "application/json"],
        body: Data(#"{"token":"TOKEN-abc123"}"#.utf8),
        url: URL(string: "https://api.test/v1/items?access_token=QS-s3cr3t"))

    private func expectNoSecret(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        for secret in Self.secrets where text.contains(secret) {
            Issue.record("\(secret) leaked in:\n\(text)", sourceLocation: sourceLocation)
        }
    }

    private func dumped(_ value: Any) -> String {
        var text = ""
        dump(value, to: &text)
        return text
    }

    @Test func requestInEveryPrintedForm() {
        expectNoSecret(request.description)
        expectNoSecret(request.debugDescription)
        expectNoSecret("\(request)")
        expectNoSecret(String(reflecting: request))
        expectNoSecret(dumped(request))
        expectNoSecret(dumped(Mirror(reflecting: request).children.map { "\($0.label ?? ""): \($0.value)" }))
        expectNoSecret(request.curl)
        expectNoSecret(dumped(request |> decode(User.self)))
        #expect(dumped(request).contains("api.test"))
    }

    /// A header marked sensitive stays hidden when the headers are printed on their own.
    @Test func headersMarkedSensitiveStayHiddenOnTheirOwn() {
        let marked = Request.get |> url("https://api.test/") |> header("X-Internal", "CUSTOM-x1y2", sensitive: true)
            |> apiKey("KEY-9f8e7d", in: .header("X-Plain"))
        expectNoSecret(String(describing: marked.headers))
        expectNoSecret(dumped(marked.headers))
        expectNoSecret(marked.description)
        expectNoSecret(marked.curl)
        var direct = HTTPHeaders()
        direct.add("X-Internal", "CUSTOM-x1y2")
        direct.markSensitive("x-internal")
        expectNoSecret("\(direct)")
        let queried = Request.get |> url("https://api.test/") |> apiKey("KEY-9f8e7d", in: .query("k"))
        expectNoSecret(dumped(queried.queryItems))
        expectNoSecret("\(queried.queryItems)")
        expectNoSecret(queried.description)
        #expect(marked.headers["X-Internal"] == "CUSTOM-x1y2")
        #expect(marked.headers == ["X-Internal": "CUSTOM-x1y2", "X-Plain": "KEY-9f8e7d"])
    }

    @Test func headersAndQueryItemsInEveryPrintedForm() {
        expectNoSecret(String(describing: request.headers))
        expectNoSecret(String(reflecting: request.headers))
        expectNoSecret(dumped(request.headers))
        expectNoSecret(dumped(request.headers.fields))
        expectNoSecret(request.headers.map(\.description).joined())
        let query = Request.get |> url("https://api.test/") |> query("api_key", "QS-s3cr3t") |> query("refresh_token", "QS-s3cr3t")
        expectNoSecret(dumped(query.queryItems))
        expectNoSecret("\(query.queryItems)")
        // The values are still there for code that reads them.
        #expect(request.headers[.authorization] == "Bearer TOKEN-abc123")
    }

    @Test func responseInEveryPrintedForm() {
        expectNoSecret("\(response)")
        expectNoSecret(String(reflecting: response))
        expectNoSecret(dumped(response))
        expectNoSecret(dumped(DecodedResponse(value: 1, response: response)))
        #expect("\(response)".contains("200"))
    }

    @Test func errorInEveryPrintedForm() throws {
        let failingURL = try #require(URL(string: "https://user:PW-hunter2@api.test/v1?access_token=QS-s3cr3t"))
        let underlying = URLError(
            .timedOut,
            userInfo: [NSURLErrorFailingURLErrorKey: failingURL, "NSErrorFailingURLStringKey": failingURL.absoluteString])
        let error = CourierError.wrapping(underlying, request: request)
        let withResponse = CourierError(.unacceptableStatus(500, errorBody: nil), request: request, response: response)
        for error in [error, withResponse] {
            expectNoSecret(error.description)
            expectNoSecret(error.localizedDescription)
            expectNoSecret(String(reflecting: error))
            expectNoSecret(dumped(error))
            expectNoSecret("\(error.underlyingError.map { "\($0)" } ?? "")")
            expectNoSecret(dumped(error.underlyingError as Any))
            expectNoSecret((error.underlyingError as? URLError)?.failingURL?.absoluteString ?? "")
            expectNoSecret(((error.underlyingError as? NSError)?.userInfo).map { "\($0)" } ?? "")
        }
        #expect((error.underlyingError as? URLError)?.code == .timedOut)
        #expect((error.underlyingError as? URLError)?.failingURL?.host == "api.test")
    }

    /// FoundationNetworking's delegate reports some failures as an `NSError` in `NSURLErrorDomain`
    /// rather than a `URLError`: mapped by its code, its failing URL redacted, every other entry
    /// (a message that repeats the URL) dropped. The core reads neither type itself (it builds on
    /// FoundationEssentials); the URLSession transport's module does, for every error path.
    @Test func anNSErrorWithAFailingURLIsMappedAndRedacted() throws {
        let failingURL = try #require(URL(string: "https://user:PW-hunter2@api.test/v1?access_token=QS-s3cr3t"))
        let underlying = NSError(
            domain: NSURLErrorDomain, code: NSURLErrorTimedOut,
            userInfo: [
                NSURLErrorFailingURLErrorKey: failingURL, NSLocalizedDescriptionKey: "timed out: \(failingURL.absoluteString)",
            ])
        let error = CourierError.wrapping(underlying, request: request)
        let timedOut = if case .timedOut = error.cause { true } else { false }
        #expect(timedOut, "\(error.cause)")
        let redacted = try #require(error.underlyingError as? NSError)
        #expect(redacted.domain == NSURLErrorDomain && redacted.code == NSURLErrorTimedOut)
        #expect((redacted.userInfo[NSURLErrorFailingURLErrorKey] as? URL)?.host == "api.test")
        expectNoSecret("\(redacted.userInfo)")
        expectNoSecret(dumped(error))
        #expect(dumped(error).contains("domain: \(NSURLErrorDomain), code: \(NSURLErrorTimedOut)"), "\(dumped(error))")
        // An error of another domain keeps what it says; only its type, domain and code are shown.
        let other = CourierError.wrapping(NSError(domain: "com.example", code: 7, userInfo: ["note": "kept"]), request: request)
        #expect((other.underlyingError as? NSError)?.userInfo["note"] as? String == "kept")
        let kind: TransportFailure.Kind? = if case .transport(let failure) = other.cause { failure.kind } else { nil }
        #expect(kind == .other, "\(other.cause)")
    }

    /// An error body that quotes the credential it rejected does not put it in the message.
    @Test func errorMessagesThatEchoTheRequestAreRedacted() async {
        let executor = InMemoryExecutor { _ in
            .status(401, headers: ["Content-Type": "application/json"], body: Data(#"{"code":"auth","message":"token TOKEN-abc123 expired"}"#.utf8))
        }
        let error = await expectCourierError { _ = try await executor.send(request |> decode(User.self, error: APIError.self)) }
        expectNoSecret(error.map { "\($0)" } ?? "")
        expectNoSecret(error?.localizedDescription ?? "")
        #expect(error?.errorBody(as: APIError.self)?.message == "token TOKEN-abc123 expired")
    }

    @Test func authRefreshMiddlewareNeverShowsItsCredential() {
        let auth = AuthRefreshMiddleware(origins: ["https://api.test"], credential: "TOKEN-abc123") { _ in "x" }
        expectNoSecret("\(auth)")
        expectNoSecret(dumped(auth))
        expectNoSecret(dumped(DefaultHeadersMiddleware([.authorization: "Bearer TOKEN-abc123"])))
    }

    /// Names are matched by the words they are made of, not by exact spelling.
    @Test(arguments: [
        "password", "Password", "user[password]", "user%5Bpassword%5D", "user%5bpassword%5d", "new_password",
        "current_password", "newPassword", "password_confirmation", "passwordConfirmation", "client_secret",
        "clientSecret", "refresh_token", "refreshToken", "access-token", "X-API-Key", "x_api_key", "apiKey", "APIKey",
        "api.key", "data[credentials][aws]", "Set-Cookie", "X-Amz-Security-Token", "X-Amz-Credential", "session_id",
        "X-CSRF-Token", "authToken", "Proxy-Authorization", "private_key", "key", "sig",
    ])
    func sensitiveNamesAreMatchedByWords(name: String) {
        let redaction = Redaction()
        #expect(redaction.isSensitive(fieldName: name))
        #expect(redaction.isSensitive(queryName: name))
        #expect(redaction.isSensitive(header: HeaderName(rawValue: name)))
    }

    /// A capital followed by lowercase starts a word after a letter outside ASCII too, as it does
    /// after an ASCII lowercase letter: `\u{C4}Token` was one word, `\u{E4}token`, and its value
    /// showed (found by the BodyRedactor fuzz target, through `\u{FFFD}Cookie`).
    @Test(arguments: ["\u{C4}Token", "\u{FFFD}\u{FFFD}Cookie", "stra\u{DF}ePassword", "\u{E9}API_Key"])
    func aCapitalAfterALetterOutsideASCIIStartsAWord(name: String) {
        #expect(Redaction().isSensitive(fieldName: name))
        #expect(Redaction().isSensitive(header: HeaderName(rawValue: name)))
    }

    @Test(arguments: [
        "page", "author", "tokenizer", "keyboard", "passenger", "Content-Type", "Accept", "sort_key", "id", "name",
        "Idempotency-Key", "X-Request-ID", "WWW-Authenticate", "monkey", "description", "\u{E4}token", "\u{C4}TOKENIZER",
    ])
    func ordinaryNamesAreNotHidden(name: String) {
        #expect(!Redaction().isSensitive(fieldName: name))
    }

    @Test func extraNamesHideNestedAndRespelledFields() {
        let redaction = Redaction(headers: ["X-Session"], queryNames: ["ssn"])
        #expect(redaction.isSensitive(fieldName: "ssn"))
        #expect(redaction.isSensitive(fieldName: "user[ssn]"))
        #expect(redaction.isSensitive(fieldName: "SSN"))
        #expect(redaction.isSensitive(fieldName: "x_session"))
        #expect(redaction.isSensitive(header: "x-session"))
        #expect(!redaction.isSensitive(fieldName: "lesson"))
    }

    /// A response that echoes the request (httpbin /anything, many error pages) is redacted with
    /// the request's own names and values, everywhere bodies are shown.
    @Test func echoedBodiesAreRedactedWithTheRequestsOwnRedaction() async throws {
        let echoed = """
            {"args":{"access_token":"QS-s3cr3t","page":"2"},"data":"{\\"new_password\\":\\"PW-hunter2\\"}",
            "form":{"user[password]":"PW-hunter2","client_secret":"KEY-9f8e7d"},
            "headers":{"Authorization":"Bearer TOKEN-abc123","Cookie":"session=COOKIE-v4lue; theme=dark",
            "Proxy-Authorization":"Basic PROXY-cr3d","X-Api-Key":"KEY-9f8e7d","X-Tenant-Secret-Ref":"CUSTOM-x1y2"},
            "url":"https://api.test/v1/items?access_token=QS-s3cr3t&page=2","note":"your token TOKEN-abc123 is fine"}
            """
        let executor = InMemoryExecutor { _ in .status(400, headers: ["Content-Type": "application/json"], body: Data(echoed.utf8)) }
        let logs = Box([String]())
        let recorder = HARRecorder()
        let logged = executor.with(
            LoggingMiddleware(bodies: .on(maxBytes: 10_000)) { event in logs.withLock { $0.append("\(event.responseBody ?? "")") } },
            recorder)
        let response = try await logged.send(request)
        #expect(response.status == 400)
        let logText = logs.withLock { $0.joined() }
        expectNoSecret(logText)
        #expect(logText.contains("\"page\":\"2\""))
        #expect(logText.contains(#""X-Api-Key":"<redacted>""#))
        #expect(logText.contains("theme") == false)  // the whole Cookie value is hidden
        let harText = String(decoding: try JSONEncoder().encode(recorder.har), as: UTF8.self)
        expectNoSecret(harText)
        // Redacted JSON stays JSON.
        let shown = try #require(recorder.entries.first?.response.content.text)
        #expect((try? JSONSerialization.jsonObject(with: Data(shown.utf8))) != nil)

        struct Shape: Decodable { var missing: Int }
        let decodeError = await expectCourierError { _ = try await executor.send(request |> decode(Shape.self).validate(status: 400...400)) }
        expectNoSecret(decodeError.map { "\($0)" } ?? "")
        expectNoSecret(dumped(decodeError as Any))
    }

    /// Found by the BodyRedactor fuzz target: a secret echoed inside a JSON string the way JSON
    /// encoders write it (`\/` for a slash, as PHP and Apple's JSONSerialization do; `\uXXXX`
    /// outside ASCII, as Python's json does; `\"` for a quote) was shown, because only the
    /// secret as written was searched for. Base64 tokens hold slashes.
    @Test func aSecretIsHiddenInEveryFormAJSONEncoderWritesIt() async throws {
        let request = Request.get
            |> url("https://api.test/v1/me?access_token=p%C3%A4ss%22w%C3%B6rd")
            |> bearer("tok/en+ab==")
        let echoed = #"""
            {"message":"token tok\/en+ab== is expired","hint":"key päss"wörd, or PÄSS? päss"wörd"}
            """#
        let executor = InMemoryExecutor { _ in .status(401, headers: ["Content-Type": "application/json"], body: Data(echoed.utf8)) }
        let logs = Box([String]())
        let logged = executor.with(LoggingMiddleware(bodies: .on(maxBytes: 10_000)) { event in
            logs.withLock { $0.append(event.responseBody ?? "") }
        })
        _ = try await logged.send(request)
        let shown = logs.withLock { $0.joined() }
        for form in [#"tok\/en+ab=="#, #"päss"wörd"#, #"päss"wörd"#] {
            #expect(!shown.contains(form), "\(form) in \(shown)")
        }
        #expect(shown.contains("is expired"))
        #expect((try? JSONSerialization.jsonObject(with: Data(shown.utf8))) != nil)
    }

    @Test(arguments: [
        "user%5Bpassword%5D=PW-hunter2&name=ada", "new_password=PW-hunter2&current_password=PW-hunter2",
        "password_confirmation=PW-hunter2", "client_secret=KEY-9f8e7d&grant_type=x", "refresh_token=TOKEN-abc123",
        "newPassword=PW-hunter2",
    ])
    func formFieldsAreRedactedInCurlLogsAndHAR(form: String) async throws {
        let login = Request.post |> url("https://api.test/login") |> body(Data(form.utf8), contentType: "application/x-www-form-urlencoded")
        expectNoSecret(login.curl)
        let recorder = HARRecorder()
        _ = try await InMemoryExecutor { _ in .text("ok") }.with(recorder).send(login)
        expectNoSecret(String(decoding: try JSONEncoder().encode(recorder.har), as: UTF8.self))
    }

    @Test func jsonFieldsAreRedactedInCurl() {
        struct Change: Encodable {
            var newPassword = "PW-hunter2"
            var user = ["password": "PW-hunter2", "name": "ada"]
            var pin = 123_456
        }
        let change = Request.post |> url("https://api.test/me") |> json(Change())
        expectNoSecret(change.curl)
        #expect(!change.curl.contains("123456"))
        #expect(change.curl.contains("ada"))
    }
}
