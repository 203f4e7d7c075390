import Courier
import Foundation
import Testing

/// Headers that frame or route the message must agree with the request, or it is not sent.
@Suite("Framing headers")
struct FramingTests {
    private let post = Request.post |> url("https://api.test/items") |> body(Data(repeating: 0x41, count: 45))

    // A no-break or em space is not optional whitespace: a server reads it as part of the value.
    @Test(arguments: ["5", "44", "46", "-45", "+45", "45abc", "0x2d", "", "45, 5", "99999999999999999999999", "45\u{A0}", "\u{2003}45"])
    func contentLengthThatDisagreesWithTheBodyIsRefused(value: String) {
        let request = post |> header(.contentLength, value)
        #expect(request.problemKinds == [.invalidFraming])
        #expect(throws: CourierError.self) { try request.urlRequest() }
    }

    @Test func contentLengthThatMatchesTheBodyIsAllowed() throws {
        #expect((post |> header(.contentLength, "45")).problems.isEmpty)
        #expect((post |> header(.contentLength, " 45 ")).problems.isEmpty)
        #expect((Request.get |> url("https://api.test/") |> header(.contentLength, "0")).problems.isEmpty)
    }

    @Test func repeatedContentLengthsMustAllMatch() {
        let request = post |> addingHeader(.contentLength, "45") |> addingHeader("content-length", "5")
        #expect(request.problemKinds == [.invalidFraming])
    }

    @Test func contentLengthWithoutABodyMustBeZero() {
        #expect((Request.get |> url("https://api.test/") |> header(.contentLength, "10")).problemKinds == [.invalidFraming])
    }

    @Test(arguments: [
        ("Transfer-Encoding", "chunked"), ("transfer-encoding", "identity"), ("Trailer", "X-Checksum"),
        ("Upgrade", "h2c"), ("Upgrade", "websocket"), ("Proxy-Connection", "keep-alive"), ("TE", "gzip"),
        ("TE", "trailers, deflate"), ("Connection", "Authorization"), ("Connection", "close, X-Forwarded-For"),
        ("Connection", "upgrade"), ("Connection", "close\u{A0}"), ("Connection", "close,\u{301}upgrade"), ("TE", "trailers\u{2003}"),
        ("Host", "evil.test"), ("Host", "api.test:8443"), ("host", "api.test.evil.test"),
    ])
    func framingAndRoutingHeadersAreRefused(name: String, value: String) {
        let request = post |> header(HeaderName(rawValue: name), value)
        #expect(request.problemKinds == [.invalidFraming])
        // The message names the header, never its value's secrets.
        #expect(request.problems.first?.message.lowercased().contains(name.lowercased()) == true)
    }

    @Test(arguments: ["CONTENT-LENGTH", "Transfer-ENCODING", "tE", "HOST", "trailer", "UpGrade", "proxy-CONNECTION"])
    func framingNamesAreRecognisedInAnyCase(name: String) {
        // Decided once when the name is made; the spelling never matters.
        let request = post |> header(HeaderName(rawValue: name), "x")
        #expect(request.problemKinds == [.invalidFraming])
    }

    @Test(arguments: ["", " ", "X Trace", "X-Tr\u{E9}ce", "X:Y", "X\r\nY", "(x)"])
    func invalidNamesStayInvalid(name: String) {
        #expect(!HeaderName(rawValue: name).isValid)
        #expect((post |> header(HeaderName(rawValue: name), "x")).problemKinds.contains(.invalidHeaderName))
    }

    @Test(arguments: ["X-Trace", "x", "!#$%&'*+-.^_`|~09azAZ", "Content-Lengthy", "Hosts", "T"])
    func validNamesStayValid(name: String) {
        #expect(HeaderName(rawValue: name).isValid)
        #expect((post |> header(HeaderName(rawValue: name), "x")).problems.isEmpty)
    }

    @Test(arguments: [
        ("Connection", "close"), ("Connection", "keep-alive"), ("Connection", "Keep-Alive, close"), ("TE", "trailers"),
        ("Host", "api.test"), ("Host", "API.TEST:443"),
    ])
    func harmlessValuesAreAllowed(name: String, value: String) {
        #expect((post |> header(HeaderName(rawValue: name), value)).problems.isEmpty)
    }

    @Test func hostMustMatchANonDefaultPortAndIPv6() {
        let local = Request.get |> url("http://127.0.0.1:8080/x")
        #expect((local |> header(.host, "127.0.0.1:8080")).problems.isEmpty)
        #expect((local |> header(.host, "127.0.0.1")).problemKinds == [.invalidFraming])
        let six = Request.get |> url("http://[::1]:9000/")
        #expect((six |> header(.host, "[::1]:9000")).problems.isEmpty)
    }

    @Test func nothingIsSentForARefusedRequest() async {
        let executor = InMemoryExecutor { _ in .text("sent") }
        let error = await expectCourierError { _ = try await executor.send(post |> header(.contentLength, "5")) }
        guard case .invalidRequest(let problems) = error?.cause else {
            Issue.record("expected invalidRequest, got \(String(describing: error))")
            return
        }
        #expect(problems.map(\.kind) == [.invalidFraming])
        #expect(executor.requests.isEmpty)
    }
}

@Suite("Framing: bodies on GET and HEAD")
struct BodylessMethodTests {
    @Test(arguments: [Request.get, Request.head])
    func aGetOrHeadWithABodyIsRefusedBeforeSending(start: Request) {
        let request = start |> url("https://api.example.com/search") |> json(["q": "x"])
        #expect(request.problems.map(\.kind) == [.invalidFraming])
        #expect(request.problems.first?.message.contains("cannot carry a body") == true)
        #expect(throws: CourierError.self) { try request.urlRequest() }
    }

    @Test func anEmptyBodyIsFine() {
        let request = .get |> url("https://api.example.com/search") |> body(Data())
        #expect(request.problems.isEmpty)
    }
}
