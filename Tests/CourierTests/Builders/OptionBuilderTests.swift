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
        #expect(try (base |> timeout(2)).urlRequest().timeoutInterval == 2)
        #if canImport(FoundationNetworking)
            // FoundationNetworking counts whole seconds: rounded up, the executor enforces 2.5 s.
            #expect(try (base |> timeout(2.5)).urlRequest().timeoutInterval == 3)
        #else
            #expect(try (base |> timeout(2.5)).urlRequest().timeoutInterval == 2.5)
        #endif
    }

    /// Any positive, finite number is accepted; huge ones are clamped where they would overflow
    /// a transport's timer (FoundationNetworking computes `Int(interval) * 1000`).
    @Test(arguments: [9.3e15, 1e20, 1e300, Double.greatestFiniteMagnitude, Request.maximumInterval + 1])
    func hugeTimeoutsAreClamped(seconds: Double) throws {
        let request = base |> timeout(seconds) |> deadline(seconds)
        #expect(request.problems.isEmpty)
        #expect(try request.urlRequest().timeoutInterval == Request.maximumInterval)
    }

    @Test(arguments: [1e-300, 0.001, 0.5, Double.leastNonzeroMagnitude])
    func tinyTimeoutsAreValid(seconds: Double) throws {
        let request = base |> timeout(seconds)
        #expect(request.problems.isEmpty)
        #expect(try request.urlRequest().timeoutInterval > 0)
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
