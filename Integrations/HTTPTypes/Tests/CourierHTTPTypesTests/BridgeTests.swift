import Courier
import CourierHTTPTypes
import Foundation
import HTTPTypes
import Testing

/// Courier's values to swift-http-types' and back: nothing reordered, merged, altered or lost,
/// and nothing invalid converted.
@Suite("swift-http-types bridge")
struct BridgeTests {
    static let headers: Courier.HTTPHeaders = {
        var headers: Courier.HTTPHeaders = ["Accept": "application/json"]
        headers.add("Cookie", "a=1")
        headers.add("X-Tag", "one")
        headers.add("Cookie", "b=2")
        headers.add("X-Tag", "two")
        headers.add("X-Api-Key", "k3y")
        return headers
    }()

    @Test func headersRoundTripInOrderWithRepeats() throws {
        let fields = try Self.headers.httpFields()
        #expect(fields.map(\.name.rawName) == ["Accept", "Cookie", "X-Tag", "Cookie", "X-Tag", "X-Api-Key"])
        #expect(fields.map(\.value) == ["application/json", "a=1", "one", "b=2", "two", "k3y"])
        // HTTPFields joins by name: Cookie with "; ", others with ", ".
        #expect(fields[.cookie] == "a=1; b=2")
        #expect(fields[HTTPField.Name("X-Tag")!] == "one, two")
        let back = Courier.HTTPHeaders(httpFields: fields)
        #expect(back == Self.headers)
    }

    @Test func sensitiveHeadersAreNeverIndexedAndComeBackSensitive() throws {
        var headers = Self.headers
        headers.add("Authorization", "Bearer t0ken")
        headers.add("X-Session", "s3ssion")
        headers.markSensitive("X-Session")
        let fields = try headers.httpFields()
        let strategies = Dictionary(fields.map { ($0.name.rawName, $0.indexingStrategy) }, uniquingKeysWith: { first, _ in first })
        #expect(strategies["Authorization"] == .disallow)
        #expect(strategies["Cookie"] == .disallow)
        #expect(strategies["X-Api-Key"] == .disallow)
        #expect(strategies["X-Session"] == .disallow)
        #expect(strategies["Accept"] == .automatic)
        let back = Courier.HTTPHeaders(httpFields: fields)
        #expect(back.sensitiveNames.contains("X-Session"))
        #expect(!String(describing: back).contains("s3ssion"))
        #expect(!String(describing: back).contains("t0ken"))
    }

    @Test func invalidHeadersAreRefusedNotAltered() {
        for (name, value) in [("X-Bad", "a\u{0}b"), ("X-Bad", "a\rb"), ("X-Bad", "a\nInjected: 1"), ("Bad Name", "v"), ("", "v")] {
            var headers = Courier.HTTPHeaders()
            headers.add(HeaderName(rawValue: name), value)
            #expect(throws: CourierError.self, "\(name.debugDescription): \(value.debugDescription)") { _ = try headers.httpFields() }
        }
        // The error names the header, never the value.
        var secret = Courier.HTTPHeaders()
        secret.add("Authorization", "Bearer t0ken\r\nX: 1")
        do {
            _ = try secret.httpFields()
            Issue.record("converted an invalid value")
        } catch {
            #expect(!String(describing: error).contains("t0ken"))
            #expect(!error.localizedDescription.contains("t0ken"))
        }
    }

    @Test func aRequestRoundTripsWithItsEncodedPathUntouched() throws {
        let request = Request.post |> baseURL("https://api.test:8443/v1") |> path("users", "a b/c") |> query("q", "x&y=z")
            |> bearer("t0ken") |> header("X-Tag", "one")
        let http = try request.httpRequest()
        #expect(http.method == .post)
        #expect(http.scheme == "https")
        #expect(http.authority == "api.test:8443")
        #expect(http.path == "/v1/users/a%20b%2Fc?q=x%26y%3Dz")
        #expect(http.headerFields[.authorization] == "Bearer t0ken")
        #expect(http.headerFields.first { $0.name == .authorization }?.indexingStrategy == .disallow)
        let back = try Request(httpRequest: http, body: Data("{}".utf8))
        #expect(try back.validatedURLString() == "https://api.test:8443/v1/users/a%20b%2Fc?q=x%26y%3Dz")
        #expect(back.method == .post)
        #expect(back.headers[.authorization] == "Bearer t0ken")
        #expect(back.headers["X-Tag"] == "one")
        #expect(back.body == Data("{}".utf8))
    }

    @Test func aGeneratedClientsEncodedPathIsNotEncodedTwice() throws {
        // What swift-openapi-runtime hands over: a path already percent-encoded.
        let http = HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1:8080", path: "/items/caf%C3%A9%20au%20lait?tag=a%2Bb")
        let request = try Request(httpRequest: http)
        #expect(try request.validatedURLString() == "http://127.0.0.1:8080/items/caf%C3%A9%20au%20lait?tag=a%2Bb")
        #expect(try request.httpRequest().path == "/items/caf%C3%A9%20au%20lait?tag=a%2Bb")
    }

    @Test func requestsThatCannotConvertSayWhy() {
        #expect(throws: CourierError.self) { _ = try (Request.get |> header("X", "v")).httpRequest() }
        #expect(throws: CourierError.self) { _ = try (Request.get |> url("https://user:pa55@api.test/")).httpRequest() }
        #expect(throws: CourierError.self) { _ = try (Request.get |> url("https://api.test/") |> header("X", "a\nb")).httpRequest() }
        #expect(throws: CourierError.self) { _ = try Request(httpRequest: HTTPRequest(method: .connect, scheme: nil, authority: "api.test:443", path: nil)) }
        #expect(throws: CourierError.self) { _ = try Request(httpRequest: HTTPRequest(method: .options, scheme: "https", authority: "api.test", path: "*")) }
    }

    @Test func aResponseRoundTripsAndRefusesStatusesHTTPTypesCannotHold() throws {
        var fields = HTTPFields()
        fields.append(HTTPField(name: .contentType, value: "application/json"))
        fields.append(HTTPField(name: .setCookie, value: "a=1"))
        fields.append(HTTPField(name: .setCookie, value: "b=2"))
        let response = Response(httpResponse: HTTPResponse(status: .created, headerFields: fields), body: Data("{}".utf8))
        #expect(response.status == 201)
        #expect(response.headers.values(for: .setCookie) == ["a=1", "b=2"])
        #expect(response.contentType == .json)
        let back = try response.httpResponse()
        #expect(back.status == .created)
        #expect(back.headerFields.map(\.value) == ["application/json", "a=1", "b=2"])
        for status in [-1, 0, 99, 1000, Int.max, Int.min] {
            #expect(throws: CourierError.self, "\(status)") { _ = try Response(status: status).httpResponse() }
        }
    }
}
