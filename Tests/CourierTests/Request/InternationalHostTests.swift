@testable import CourierCore
import Courier
import Foundation
import Testing

/// An internationalized host is taken in its ASCII form, as URLs on Apple platforms give it: the
/// name DNS, TLS and the cookie jar compare, on every platform alike.
@Suite("Internationalized hosts: one name, in its ASCII form")
struct InternationalHostTests {
    /// RFC 3492's own samples, and the names users write.
    @Test(arguments: [
        ("bücher", "bcher-kva"), ("münchen", "mnchen-3ya"), ("ü", "tda"), ("日本語", "wgv71a119e"), ("faß", "fa-hia"),
    ])
    func punycodeEncodesAsTheRFCSays(label: String, encoded: String) {
        #expect(Punycode.encode(Array(label.unicodeScalars)) == encoded)
    }

    @Test func urlTakesTheHostInItsASCIIForm() throws {
        let request = Request.get |> url("https://Bücher.example:8443/straße?q=ü")
        let sent = try request.validatedURL()
        #expect(sent.host == "xn--bcher-kva.example")
        #expect(sent.port == 8443)
        // Only the host: the path and query keep their own encoding.
        #expect(sent.absoluteString.hasPrefix("https://xn--bcher-kva.example:8443/"))
        // Composed and decomposed spellings are one host.
        let decomposed = Request.get |> url("https://bu\u{308}cher.example/")
        #expect(try decomposed.validatedURL().host == "xn--bcher-kva.example")
        let base = Request.get |> baseURL("https://user@日本語.jp") |> path("x")
        #expect(try base.validatedURL().host == "xn--wgv71a119e.jp")
    }

    @Test(arguments: ["https://bü cher.example/", "https://bü/cher", "https://b\u{200B}ü.example/", "https://" + String(repeating: "ü", count: 70) + ".example/"])
    func aNameThatCannotBeAHostIsARequestProblem(address: String) {
        let request = Request.get |> url(address)
        if address == "https://bü/cher" {
            // "bü" is a fine host; "/cher" its path.
            #expect((try? request.validatedURL().host) == "xn--b-eha")
            return
        }
        #expect(request.problems.map(\.kind).contains(.invalidURL), "\(address): \(request.problems)")
    }

    /// The independent suite's case: a cookie set by `http://bücher.example/` is the cookie of
    /// `xn--bcher-kva.example`, and is sent back to the same host however it is written.
    @Test func aCookieFromAnInternationalHostIsThatHostsInASCIIForm() async throws {
        let jar = CookieStore()
        let api = InMemoryExecutor { request in
            request.headers[.cookie] == nil ? .status(200, headers: ["Set-Cookie": "sid=1; Domain=bücher.example"]) : .status(204)
        }.eachHop(CookieMiddleware(jar))
        _ = try await api.send(.get |> url("http://bücher.example/login"))
        let stored = try #require(jar.jar.cookies.first)
        #expect(stored.domain == "xn--bcher-kva.example")
        let again = try await api.send(.get |> url("http://xn--bcher-kva.example/profile"))
        #expect(again.status == 204)
        let sub = try await api.send(.get |> url("http://www.BÜCHER.example/"))
        #expect(sub.status == 204)
    }
}
