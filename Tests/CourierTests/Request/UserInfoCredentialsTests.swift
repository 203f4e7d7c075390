import Courier
import Foundation
import Testing

/// `url("http://user:password@host/x")` sends the credentials as Basic authentication (as curl
/// and reqwest do), never the userinfo itself, never to another origin after a redirect, and
/// never prints the password.
@Suite("Credentials in the URL: Basic authentication, not dropped")
struct UserInfoCredentialsTests {
    @Test func theUserInfoGoesAsBasicAuthenticationAndLeavesTheURL() async throws {
        let api = InMemoryExecutor.scripted([], then: .status(200))
        _ = try await api.send(.get |> url("https://ada:p%40ss%20w@api.test/reports?x=1"))
        let sent = try #require(api.requests.first)
        // RFC 7617: "ada:p@ss w", UTF-8 then Base64.
        #expect(sent.headers[.authorization] == "Basic " + Data("ada:p@ss w".utf8).base64EncodedString())
        #expect(sent.url?.absoluteString == "https://api.test/reports?x=1")
    }

    @Test func anAuthorizationTheRequestHasWinsAndTheUserInfoStillLeaves() async throws {
        let api = InMemoryExecutor.scripted([], then: .status(200))
        _ = try await api.send(.get |> url("https://ada:pw@api.test/x") |> bearer("t0ken"))
        let sent = try #require(api.requests.first)
        #expect(sent.headers[.authorization] == "Bearer t0ken")
        #expect(sent.url?.absoluteString == "https://api.test/x")
    }

    @Test func aUserNameWithAColonIsRefusedAndNothingIsSent() async throws {
        let api = InMemoryExecutor.scripted([], then: .status(200))
        let error = try #require(await #expect(throws: CourierError.self) { try await api.send(.get |> url("https://a%3Ab:pw@api.test/x")) })
        guard case .invalidRequest(let problems) = error.cause else {
            Issue.record("expected a request problem, got \(error)")
            return
        }
        #expect(problems.map(\.kind) == [.invalidCredentials])
        #expect(api.requests.isEmpty)
        #expect(!error.description.contains("pw@"))
    }

    @Test func theCredentialsDoNotFollowARedirectToAnotherOrigin() async throws {
        let api = InMemoryExecutor.scripted(
            [.status(302, headers: ["Location": "https://elsewhere.test/landing"])], then: .status(200))
        _ = try await api.send(.get |> url("https://ada:pw@api.test/start"))
        #expect(api.requests.count == 2)
        #expect(api.requests.first?.headers[.authorization] != nil)
        #expect(api.requests.last?.headers[.authorization] == nil)
    }

    @Test func thePasswordNeverPrints() async throws {
        let api = InMemoryExecutor.scripted([], then: .status(500))
        let error = try #require(await #expect(throws: CourierError.self) { try await api.send(.get |> url("https://ada:hunter2@api.test/x") |> decodeData()) })
        #expect(!error.description.contains("hunter2"))
        #expect(!"\(try #require(api.requests.first))".contains("hunter2"))
    }
}
