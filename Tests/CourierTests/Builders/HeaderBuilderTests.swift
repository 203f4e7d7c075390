import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import Testing

@Suite("Header builders")
struct HeaderBuilderTests {
    private let base = Request.get |> baseURL("https://api.test")

    @Test func headerSetsAndReplacesCaseInsensitively() throws {
        let request = base |> header("X-Trace", "1") |> header("x-trace", "2")
        #expect(request.headers.values(for: "X-TRACE") == ["2"])
        #expect(try request.urlRequest().value(forHTTPHeaderField: "X-Trace") == "2")
    }

    @Test func addingHeaderKeepsEarlierValues() throws {
        let request = base |> addingHeader("Accept-Language", "en") |> addingHeader("accept-language", "fr")
        #expect(request.headers.values(for: .acceptLanguage) == ["en", "fr"])
        #expect(request.headers[.acceptLanguage] == "en, fr")
        #expect(try request.urlRequest().value(forHTTPHeaderField: "Accept-Language") == "en, fr")
    }

    @Test func repeatedNamesRenderAsOneFieldInFirstPosition() throws {
        let request = base |> addingHeader("X-A", "1") |> header("X-B", "2") |> addingHeader("x-a", "3")
            |> addingHeader("Cookie", "a=1") |> addingHeader("cookie", "b=2")
        let rendered = try request.urlRequest()
        #expect(rendered.value(forHTTPHeaderField: "X-A") == "1, 3")
        #expect(rendered.value(forHTTPHeaderField: "X-B") == "2")
        // RFC 6265 §5.4: cookie pairs share one field, separated by "; ".
        #expect(rendered.value(forHTTPHeaderField: "Cookie") == "a=1; b=2")
    }

    @Test func removingHeaderRemovesAllFields() {
        let request = base |> addingHeader("X-A", "1") |> addingHeader("x-a", "2") |> removingHeader("X-A")
        #expect(!request.headers.contains("x-a"))
    }

    @Test func setKeepsThePositionOfTheFirstField() {
        var headers: HTTPHeaders = ["A": "1", "B": "2", "a": "3", "C": "4"]
        headers.set("A", "9")
        #expect(headers.map(\.name.rawValue) == ["A", "B", "C"])
        #expect(headers.map(\.value) == ["9", "2", "4"])
    }

    @Test func presets() throws {
        let request = base |> accept(.json) |> contentType(.formURLEncoded) |> userAgent("Courier-Tests/1.0")
        let rendered = try request.urlRequest()
        #expect(rendered.value(forHTTPHeaderField: "Accept") == "application/json")
        #expect(rendered.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded")
        #expect(rendered.value(forHTTPHeaderField: "User-Agent") == "Courier-Tests/1.0")
    }

    @Test func headerNamesCompareCaseInsensitivelyButKeepSpelling() {
        let name: HeaderName = "x-Custom-NAME"
        #expect(name == HeaderName(rawValue: "X-CUSTOM-name"))
        let distinct: Set<HeaderName> = [name, "X-CUSTOM-NAME"]
        #expect(distinct.count == 1)
        #expect(name.rawValue == "x-Custom-NAME")
    }

    @Test(arguments: ["line\nfeed", "carriage\rreturn", "nul\0byte", "folded\r\n continuation", "bell\u{07}"])
    func headerValueWithControlCharactersIsAProblem(value: String) {
        let request = base |> header("X-Test", value)
        #expect(request.problemKinds == [.invalidHeaderValue])
        #expect(throws: CourierError.self) { try request.urlRequest() }
    }

    @Test func problemMessageNamesTheHeaderButNotTheValue() throws {
        let request = base |> bearer("s3cr3t\r\nX-Injected: 1")
        let problem = try #require(request.problems.first)
        #expect(problem.message.contains("Authorization"))
        #expect(!problem.message.contains("s3cr3t"))
        #expect(!"\(request)".contains("s3cr3t"))
    }

    @Test(arguments: ["", "Bad Name", "Colon:", "New\nLine", "Ünïcode", "(parens)"])
    func invalidHeaderNameIsAProblem(name: String) {
        let request = base |> header(HeaderName(rawValue: name), "v")
        #expect(request.problemKinds == [.invalidHeaderName])
    }

    @Test func tabsAndNonASCIIValuesAreAllowed() throws {
        let request = base |> header("X-Name", "Zoë\tSaldaña")
        #expect(request.problems.isEmpty)
    }
}
