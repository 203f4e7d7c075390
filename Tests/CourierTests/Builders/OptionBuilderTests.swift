import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import Testing

@Suite("Method, timeout and cache builders")
struct OptionBuilderTests {
    private let base = Request.get |> baseURL("https://api.test")

    @Test func startingPointsSetTheMethod() {
        let pairs: [(Request, String)] = [
            (.get, "GET"), (.post, "POST"), (.put, "PUT"), (.patch, "PATCH"), (.delete, "DELETE"),
            (.head, "HEAD"), (.options, "OPTIONS"),
        ]
        for (request, name) in pairs { #expect(request.method.rawValue == name) }
    }

    @Test func methodBuilderAcceptsCustomTokens() throws {
        let request = base |> method("PURGE")
        #expect(try request.urlRequest().httpMethod == "PURGE")
    }

    @Test(arguments: ["GET / HTTP/1.1\r\nHost: x", "", "GE T", "GET\n"])
    func invalidMethodIsAProblem(name: String) {
        #expect((base |> method(HTTPMethod(rawValue: name))).problemKinds == [.invalidMethod])
    }

    @Test func timeoutIsRendered() throws {
        #expect(try (base |> timeout(2.5)).urlRequest().timeoutInterval == 2.5)
    }

    @Test(arguments: [0.0, -1.0, Double.nan, Double.infinity])
    func invalidTimeoutIsAProblem(seconds: Double) {
        #expect((base |> timeout(seconds)).problemKinds == [.invalidTimeout])
    }

    @Test func cachePolicyIsRendered() throws {
        let rendered = try (base |> cachePolicy(.reloadIgnoringLocalCacheData)).urlRequest()
        #expect(rendered.cachePolicy == .reloadIgnoringLocalCacheData)
    }

    @Test func idempotency() {
        #expect(HTTPMethod.put.isIdempotent && HTTPMethod.get.isIdempotent)
        #expect(!HTTPMethod.post.isIdempotent && !HTTPMethod.patch.isIdempotent)
    }
}
