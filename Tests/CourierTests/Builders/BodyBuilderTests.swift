import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import Testing

@Suite("Body builders")
struct BodyBuilderTests {
    private let base = Request.post |> baseURL("https://api.test")

    @Test func jsonEncodesBodyAndSetsContentType() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let rendered = try (base |> json(User(id: 1, name: "Ada"), encoder: encoder)).urlRequest()
        #expect(rendered.httpBody == Data(#"{"id":1,"name":"Ada"}"#.utf8))
        #expect(rendered.value(forHTTPHeaderField: "Content-Type") == "application/json")
    }

    @Test func jsonEncodingFailureIsRecordedNotThrown() throws {
        let request = base |> json(["value": Double.nan])
        #expect(request.problemKinds == [.bodyEncodingFailed])
        #expect(request.body == nil)
        let error = try #require(throws: CourierError.self) { try request.urlRequest() }
        guard case .invalidRequest(let problems) = error.cause else {
            Issue.record("unexpected cause \(error.cause)")
            return
        }
        #expect(problems.first?.message.contains("value") == true)
    }

    @Test func throwingEncodableIsRecorded() {
        struct Refuses: Encodable {
            struct Nope: Error {}
            func encode(to encoder: any Encoder) throws { throw Nope() }
        }
        let refused: Request = base |> json(Refuses())
        #expect(refused.problemKinds == [.bodyEncodingFailed])
    }

    @Test func formPairsKeepOrderAndEncodeLikeHTMLForms() throws {
        let request = base |> form(["b": "2", "a": "a b+c~", "emoji": "😀", "amp": "x&y=z"])
        #expect(request.body == Data("b=2&a=a+b%2Bc~&emoji=%F0%9F%98%80&amp=x%26y%3Dz".utf8))
        #expect(request.headers[.contentType] == "application/x-www-form-urlencoded")
    }

    @Test func formEncodableFlattensNestedFields() throws {
        struct Signup: Encodable {
            struct Address: Encodable { var city: String; var zip: String }
            var name: String
            var tags: [String]
            var address: Address
            var admin: Bool
            var nickname: String?
        }
        let value = Signup(name: "Ada L", tags: ["x", "y"], address: .init(city: "Zürich", zip: "8000"), admin: false, nickname: nil)
        let body = try #require((base |> form(encoding: value)).body)
        #expect(String(decoding: body, as: UTF8.self)
            == "name=Ada+L&tags%5B%5D=x&tags%5B%5D=y&address%5Bcity%5D=Z%C3%BCrich&address%5Bzip%5D=8000&admin=false")
    }

    @Test func formOfASingleValueIsAProblem() {
        #expect((base |> form(encoding: [1, 2, 3])).problemKinds == [.bodyEncodingFailed])
    }

    @Test func textSetsUTF8BodyAndPlainTextType() {
        let request = base |> text("héllo")
        #expect(request.body == Data("héllo".utf8))
        #expect(request.headers[.contentType] == "text/plain; charset=utf-8")
    }

    @Test func bodySetsBytesAndType() {
        let request = base |> body(Data([0, 1, 2]), contentType: "image/png")
        #expect(request.body == Data([0, 1, 2]))
        #expect(request.headers[.contentType] == "image/png")
        let untyped = base |> body(Data([9]), contentType: nil)
        #expect(!untyped.headers.contains(.contentType))
    }

    @Test func laterContentTypeOverridesBodyDefault() {
        let request = base |> json(["a": 1]) |> contentType("application/vnd.api+json")
        #expect(request.headers.values(for: .contentType) == ["application/vnd.api+json"])
    }
}
