import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import Testing

@Suite("Auth builders")
struct AuthBuilderTests {
    private let base = Request.get |> baseURL("https://api.test")

    @Test func bearerSetsAuthorization() throws {
        let request = base |> bearer("abc.def")
        #expect(try request.urlRequest().value(forHTTPHeaderField: "Authorization") == "Bearer abc.def")
    }

    @Test func basicEncodesUTF8Base64() throws {
        let request = base |> basic(username: "Aladdin", password: "open sesame")
        #expect(try request.urlRequest().value(forHTTPHeaderField: "Authorization") == "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==")
        let unicode = base |> basic(username: "test", password: "123£")
        #expect(unicode.headers[.authorization] == "Basic dGVzdDoxMjPCow==")
    }

    @Test func basicUserNameWithColonIsAProblem() {
        let request = base |> basic(username: "a:b", password: "pw")
        #expect(request.problemKinds == [.invalidCredentials])
        #expect(!"\(request)".contains("pw"))
    }

    @Test func apiKeyInDefaultHeaderIsRedacted() throws {
        let request = base |> apiKey("k-123")
        #expect(request.headers["X-API-Key"] == "k-123")
        #expect(!request.description.contains("k-123"))
    }

    @Test func apiKeyInCustomHeaderIsMarkedSensitive() {
        let request = base |> apiKey("k-123", in: .header("X-Custom-Key"))
        #expect(request.headers["x-custom-key"] == "k-123")
        #expect(request.redaction.isSensitive(header: "X-CUSTOM-KEY"))
        #expect(!request.description.contains("k-123"))
    }

    @Test func apiKeyInQueryIsSentButRedacted() {
        let request = base |> apiKey("k 1", in: .query("appid"))
        #expect(request.renderedURL == "https://api.test?appid=k%201")
        #expect(!request.description.contains("k%201") && !request.description.contains("k 1"))
        #expect(request.description.contains("appid=<redacted>"))
    }
}
