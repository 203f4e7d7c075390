import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Request description and redaction")
struct RequestDescriptionTests {
    @Test func descriptionIsAnHTTP11Message() {
        let request = Request.post |> baseURL("https://api.test:8443/v1") |> path("users") |> query("page", 2)
            |> accept(.json) |> text("hello")
        #expect(
            request.description == """
                POST /v1/users?page=2 HTTP/1.1
                Host: api.test:8443
                Accept: application/json
                Content-Type: text/plain; charset=utf-8

                <5 bytes of text/plain; charset=utf-8>
                """)
    }

    @Test func credentialsAreRedactedInDescription() {
        let request = Request.get |> baseURL("https://user:hunter2@api.test") |> path("me") |> bearer("tok-SECRET")
            |> header("Cookie", "session=COOKIE-SECRET") |> query("access_token", "QUERY-SECRET") |> query("page", 1)
            |> header("X-Signature", "SIG-SECRET", sensitive: true)
        let text = request.description + request.debugDescription + String(reflecting: request.redacted())
        for secret in ["hunter2", "tok-SECRET", "COOKIE-SECRET", "QUERY-SECRET", "SIG-SECRET"] {
            #expect(!text.contains(secret), "leaked \(secret)")
        }
        #expect(request.description.contains("Authorization: <redacted>"))
        #expect(request.description.contains("access_token=<redacted>&page=1"))
    }

    @Test func redactionNamesAreCaseInsensitive() {
        let request = Request.get |> baseURL("https://api.test") |> header("AUTHORIZATION", "x-secret")
            |> query("API_KEY", "q-secret")
        #expect(!request.description.contains("x-secret"))
        #expect(!request.description.contains("q-secret"))
    }

    @Test func redactedCopyHidesValuesButKeepsShape() {
        let request = Request.get |> baseURL("https://u:p@api.test/v1?token=base-secret&x=1") |> bearer("b")
            |> query("password", "pw") |> json(["password": "body-secret"])
        let redacted = request.redacted()
        #expect(redacted.headers[.authorization] == "<redacted>")
        #expect(redacted.queryItems.first?.value == "<redacted>")
        #expect(redacted.body == nil)
        let base = redacted.baseURL?.absoluteString ?? ""
        #expect(!base.contains("base-secret") && !base.contains("u:p"))
        #expect(base.contains("x=1"))
    }

    @Test func problemsAppearInDescription() {
        let request = Request.get |> path("..")
        #expect(request.description.contains("# invalid: the request has no URL"))
        #expect(request.description.contains("# invalid: path segment 0"))
    }

    @Test func requestsAreHashableValues() {
        let a = Request.get |> baseURL("https://api.test") |> path("x")
        let b = Request.get |> baseURL("https://api.test") |> path("x")
        #expect(a == b)
        #expect(Set([a, b]).count == 1)
        #expect(a != (b |> query("y", 1)))
    }

    @Test func renderedRequestMatchesHandWrittenURLRequest() throws {
        let request = Request.put |> baseURL("https://api.test/v1") |> path("users", 42) |> query("dry_run", true)
            |> bearer("t") |> json(["name": "Ada"]) |> timeout(5)
        let rendered = try request.urlRequest()
        var expected = URLRequest(url: try #require(URL(string: "https://api.test/v1/users/42?dry_run=true")))
        expected.httpMethod = "PUT"
        expected.setValue("Bearer t", forHTTPHeaderField: "Authorization")
        expected.setValue("application/json", forHTTPHeaderField: "Content-Type")
        expected.httpBody = Data(#"{"name":"Ada"}"#.utf8)
        expected.timeoutInterval = 5
        #expect(rendered.url == expected.url)
        #expect(rendered.httpMethod == expected.httpMethod)
        #expect(rendered.allHTTPHeaderFields == expected.allHTTPHeaderFields)
        #expect(rendered.httpBody == expected.httpBody)
        #expect(rendered.timeoutInterval == expected.timeoutInterval)
    }
}
