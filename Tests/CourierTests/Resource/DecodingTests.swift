import Courier
import Foundation
import Testing

@Suite("Resource decoding")
struct DecodingTests {
    private let request = Request.get |> baseURL(api) |> path("users", 1) |> bearer("secret-token")

    private func response(_ body: String, type: String? = "application/json") -> Response {
        response(200, body, type: type)
    }

    private func response(_ status: Int, _ body: String, type: String? = "application/json") -> Response {
        var headers = HTTPHeaders()
        if let type { headers.set(.contentType, type) }
        return Response(status: status, headers: headers, body: Data(body.utf8))
    }

    @Test func resourceKeepsTheRequestInspectable() throws {
        let resource = request |> decode(User.self)
        #expect(resource.request == request)
        #expect(try resource.request.validatedURL().path == "/v1/users/1")
    }

    @Test func decodesJSON() throws {
        let user = try (request |> decode(User.self)).decode(response(#"{"id":1,"name":"Ada"}"#))
        #expect(user == User(id: 1, name: "Ada"))
    }

    @Test func customJSONDecoderIsUsed() throws {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        struct Profile: Decodable, Sendable, Equatable { var displayName: String }
        let profile = try (request |> decode(Profile.self, decoder: decoder)).decode(response(#"{"display_name":"Ada"}"#))
        #expect(profile == Profile(displayName: "Ada"))
    }

    @Test func emptyBodyIsADecodingFailure() throws {
        let error = try #require(throws: CourierError.self) { try (request |> decode(User.self)).decode(response("")) }
        guard case .decodingFailed(let failure) = error.cause else {
            Issue.record("unexpected \(error.cause)")
            return
        }
        #expect(failure.typeName == "User")
        #expect(failure.bodySnippet == "")
    }

    @Test func malformedJSONIsADecodingFailureWithSnippet() throws {
        let error = try #require(throws: CourierError.self) {
            try (request |> decode(User.self)).decode(response(#"{"id":1,"name":"#))
        }
        guard case .decodingFailed(let failure) = error.cause else {
            Issue.record("unexpected \(error.cause)")
            return
        }
        #expect(failure.bodySnippet == #"{"id":1,"name":"#)
        #expect(error.response?.status == 200)
    }

    @Test func typeMismatchNamesTheCodingPath() throws {
        let error = try #require(throws: CourierError.self) {
            try (request |> decode([User].self)).decode(response(#"[{"id":1,"name":"a"},{"id":"two","name":"b"}]"#))
        }
        guard case .decodingFailed(let failure) = error.cause else {
            Issue.record("unexpected \(error.cause)")
            return
        }
        #expect(failure.message.contains("1.id"))
    }

    @Test func snippetHidesSecretLookingFields() throws {
        let body = #"{"access_token":"eyJ-SECRET","token_type":"bearer","expires_in":"soon"}"#
        struct Token: Decodable, Sendable { var expires_in: Int }
        let error = try #require(throws: CourierError.self) { try (request |> decode(Token.self)).decode(response(body)) }
        #expect(!error.description.contains("eyJ-SECRET"))
        #expect(error.description.contains("token_type"))
    }

    @Test func snippetIsCapped() throws {
        let long = "[" + String(repeating: "1,", count: 2000) + "x]"
        let error = try #require(throws: CourierError.self) { try (request |> decode([Int].self)).decode(response(long)) }
        guard case .decodingFailed(let failure) = error.cause else { return }
        #expect(failure.bodySnippet.count <= 257)
        #expect(failure.bodySnippet.hasSuffix("…"))
    }

    @Test func non2xxIsAnUnacceptableStatusWithBody() throws {
        let error = try #require(throws: CourierError.self) {
            try (request |> decode(User.self)).decode(response(404, #"{"code":"missing","message":"no user"}"#))
        }
        guard case .unacceptableStatus(404, nil) = error.cause else {
            Issue.record("unexpected \(error.cause)")
            return
        }
        #expect(error.response?.body == Data(#"{"code":"missing","message":"no user"}"#.utf8))
        #expect(error.status == 404)
    }

    @Test func typedErrorBodyIsDecoded() throws {
        let resource = request |> decode(User.self, error: APIError.self)
        let error = try #require(throws: CourierError.self) {
            try resource.decode(response(422, #"{"code":"invalid","message":"name is required"}"#))
        }
        #expect(error.errorBody(as: APIError.self) == APIError(code: "invalid", message: "name is required"))
        #expect(error.description.contains("422"))
    }

    @Test func undecodableErrorBodyStillGivesTheStatus() throws {
        let resource = request |> decode(User.self, error: APIError.self)
        let error = try #require(throws: CourierError.self) { try resource.decode(response(500, "<html>oops</html>")) }
        guard case .unacceptableStatus(500, nil) = error.cause else {
            Issue.record("unexpected \(error.cause)")
            return
        }
    }

    @Test func validateStatusReplacesTheAcceptableRange() throws {
        let resource = (request |> decodeText()).validate(status: 200..<400)
        #expect(try resource.decode(response(304, "", type: nil)) == "")
        #expect(try resource.decode(response(200, "x")) == "x")
        #expect(throws: CourierError.self) { try resource.decode(response(404, "")) }
    }

    @Test func contentTypeValidation() throws {
        let resource = (request |> decode(User.self)).validate(contentType: .json)
        #expect(throws: CourierError.self) { try resource.decode(response(#"{"id":1,"name":"a"}"#, type: "text/html")) }
        #expect(throws: CourierError.self) { try resource.decode(response(#"{"id":1,"name":"a"}"#, type: nil)) }
        #expect(try resource.decode(response(#"{"id":1,"name":"a"}"#, type: "application/json; charset=utf-8")).id == 1)
        #expect(try resource.decode(response(#"{"id":1,"name":"a"}"#, type: "application/vnd.users+json")).id == 1)
    }

    @Test func wrongContentTypeErrorSaysWhatWasExpected() throws {
        let resource = (request |> decode(User.self)).validate(contentType: .json)
        let error = try #require(throws: CourierError.self) { try resource.decode(response("<p>", type: "text/html")) }
        guard case .unacceptableContentType(let expected, let received) = error.cause else {
            Issue.record("unexpected \(error.cause)")
            return
        }
        #expect(expected == [.json])
        #expect(received == "text/html")
    }

    @Test func decodeIfPresentGivesNilForNoContent() throws {
        let resource = request |> decodeIfPresent(User.self)
        #expect(try resource.decode(response(204, "", type: nil)) == nil)
        #expect(try resource.decode(response(200, "", type: nil)) == nil)
        #expect(try resource.decode(response(#"{"id":2,"name":"b"}"#)) == User(id: 2, name: "b"))
    }

    @Test func decodeEmptyIgnoresTheBodyButChecksStatus() throws {
        let resource = Request.delete |> baseURL(api) |> decodeEmpty()
        try resource.decode(response(204, "", type: nil))
        #expect(throws: CourierError.self) { try resource.decode(response(409, "conflict")) }
    }

    @Test func decodeTextAndData() throws {
        #expect(try (request |> decodeText()).decode(response("héllo")) == "héllo")
        #expect(try (request |> decodeData()).decode(response("raw")) == Data("raw".utf8))
        let latin1 = Response(status: 200, body: Data([0x63, 0x61, 0x66, 0xE9]))
        #expect(try (request |> decodeText(encoding: .isoLatin1)).decode(latin1) == "café")
        #expect(throws: CourierError.self) { try (request |> decodeText()).decode(Response(status: 200, body: Data([0xFF, 0xFE]))) }
    }

    @Test func mapAndTryMap() throws {
        let names = (request |> decode([User].self)).map { $0.map(\.name) }
        #expect(try names.decode(response(#"[{"id":1,"name":"a"},{"id":2,"name":"b"}]"#)) == ["a", "b"])
        struct Empty: Error {}
        let first = (request |> decode([User].self)).tryMap { users in
            guard let first = users.first else { throw Empty() }
            return first
        }
        let error = try #require(throws: CourierError.self) { try first.decode(response("[]")) }
        guard case .decodingFailed = error.cause else {
            Issue.record("unexpected \(error.cause)")
            return
        }
        #expect(error.underlyingError is Empty)
    }

    @Test func mapKeepsValidation() throws {
        let resource = (request |> decode(User.self, error: APIError.self)).validate(contentType: .json).map(\.name)
        let error = try #require(throws: CourierError.self) {
            try resource.decode(response(400, #"{"code":"c","message":"m"}"#))
        }
        #expect(error.errorBody(as: APIError.self)?.code == "c")
    }

    @Test func customDecoderIsAPlainValue() throws {
        let lines = ResponseDecoder<[String]> { response in
            String(decoding: response.body, as: UTF8.self).split(separator: "\n").map(String.init)
        }
        #expect(try (request |> lines).decode(response("a\nb", type: "text/plain")) == ["a", "b"])
    }

    @Test func errorsCarryARedactedRequest() throws {
        let error = try #require(throws: CourierError.self) { try (request |> decode(User.self)).decode(response(500, "")) }
        #expect(error.request?.headers[.authorization] == "<redacted>")
        #expect(!error.description.contains("secret-token"))
        #expect(!String(reflecting: error).contains("secret-token"))
    }

    /// An error body that does not decode still shows, redacted, in the message.
    @Test func undecodableErrorBodyKeepsARedactedSnippet() throws {
        let resource = Request.get |> baseURL(api) |> bearer("TOKEN-abc123") |> decode(User.self, error: APIError.self)
        let body = Data(#"<html>upstream failed for token TOKEN-abc123, password=hunter2</html>"#.utf8)
        do {
            _ = try resource.decode(Response(status: 502, body: body))
            Issue.record("expected an error")
        } catch {
            #expect(error.errorBody(as: APIError.self) == nil)
            #expect(error.description.contains("upstream failed"))
            #expect(!error.description.contains("TOKEN-abc123"))
            #expect(!error.description.contains("hunter2"))
            #expect(error.response?.body == body)
        }
    }

    /// `any Error` (a `catch` inside `Task { }`) gets back to the typed error in one step.
    @Test func anyErrorConvertsBackToCourierError() {
        let typed = CourierError(.timedOut)
        let erased: any Error = typed
        #expect(erased.courier != nil)
        if case .timedOut = CourierError(erased).cause {} else { Issue.record("lost the cause") }
        if case .cancelled = CourierError(CancellationError()).cause {} else { Issue.record("cancellation not mapped") }
        #expect(URLError(.timedOut).courier == nil)
    }
}
