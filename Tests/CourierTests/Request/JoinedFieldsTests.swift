import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The one rule both transports render repeated header names by.
@Suite("Headers: repeated names joined for the wire")
struct JoinedFieldsTests {
    @Test func repeatedNamesBecomeOneFieldWhereTheFirstWasCookiesWithSemicolons() {
        var headers = HTTPHeaders()
        headers.add("Accept", "text/html")
        headers.add("Cookie", "a=1")
        headers.add("X-Trace", "t")
        headers.add("accept", "application/json")
        headers.add("COOKIE", "b=2")
        let joined = headers.joinedFields.map { "\($0.name.rawValue): \($0.value)" }
        #expect(joined == ["Accept: text/html, application/json", "Cookie: a=1; b=2", "X-Trace: t"])
    }

    @Test func fieldsWithoutRepeatsAreLeftAsTheyAre() {
        let headers: HTTPHeaders = ["Accept": "application/json"]
        #expect(headers.joinedFields == headers.fields)
    }

    @Test func bothRenderingsJoinTheSameWay() throws {
        let request = Request.get |> url("https://api.test/") |> header("Cookie", "a=1") |> header("X-A", "1")
        var twice = request
        twice.headers.add("cookie", "b=2")
        let rendered = try twice.urlRequest()
        #expect(rendered.value(forHTTPHeaderField: "Cookie") == "a=1; b=2")
    }
}
