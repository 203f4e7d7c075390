import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What the server parsed must be exactly what the caller meant.
@Suite("Integration: encoding round trips")
struct EncodingRoundTripTests {
    let executor = HTTPBin.executor()

    static let tricky = ["a+b c", "x&y=z", "#hash", "100%", "semi;colon", "Zürich", "😀👍🏽", "日本語", "slash/q?u", "~'()*!"]

    @Test(arguments: tricky)
    func queryValuesRoundTrip(value: String) async throws {
        let echo = try await executor.send(try HTTPBin.request() |> path("anything") |> query("v", value) |> decode(Echo.self))
        #expect(echo.args["v"] == .one(value))
    }

    @Test(arguments: tricky)
    func queryNamesRoundTrip(name: String) async throws {
        let echo = try await executor.send(try HTTPBin.request() |> path("anything") |> query(name, "1") |> decode(Echo.self))
        #expect(echo.args[name] == .one("1"))
    }

    @Test(arguments: tricky)
    func formValuesRoundTrip(value: String) async throws {
        let echo = try await executor.send(
            try HTTPBin.request(.post) |> path("anything") |> form(["v": value]) |> decode(Echo.self))
        #expect(echo.form["v"] == .one(value))
    }

    @Test func formStrategiesAsTheServerParsesThem() async throws {
        struct Search: Encodable {
            var tags = ["a b", "c+d"]
            var filter = ["kind": "x&y"]
            var exact = true
        }
        let brackets = try await executor.send(
            try HTTPBin.request(.post) |> path("anything") |> form(encoding: Search()) |> decode(Echo.self))
        #expect(brackets.form["tags[]"] == .many(["a b", "c+d"]))
        #expect(brackets.form["filter[kind]"] == .one("x&y"))
        #expect(brackets.form["exact"] == .one("true"))
        let plain = try await executor.send(
            try HTTPBin.request(.post) |> path("anything")
                |> form(encoding: Search(), encoder: FormEncoder(arrayEncoding: .noBrackets, boolEncoding: .numeric, spaceEncoding: .percent20))
                |> decode(Echo.self))
        #expect(plain.form["tags"] == .many(["a b", "c+d"]))
        #expect(plain.form["exact"] == .one("1"))
    }

    @Test func multipartFieldsAndFilesArriveIntact() async throws {
        struct Upload: Decodable, Sendable {
            var form: [String: String]
            var files: [String: String]
            var headers: [String: String]
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-upload-\(UUID().uuidString).txt")
        try Data("line one\r\nline two ✓".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let upload = try await executor.send(
            try HTTPBin.request(.post) |> path("anything")
                |> multipart([
                    .text("title", "Grüße & more"),
                    .text("quote\"d", "v"),
                    .file("document", at: file, contentType: .plainText),
                    .data("raw", Data("bytes".utf8), filename: "r.bin"),
                ])
                |> decode(Upload.self))
        #expect(upload.form["title"] == "Grüße & more")
        // Werkzeug decodes the %22 escape back to a quote, as browsers and servers do.
        #expect(upload.form["quote\"d"] == "v")
        #expect(upload.files["document"] == "line one\r\nline two ✓")
        #expect(upload.files["raw"] == "bytes")
        #expect(upload.headers["Content-Type"]?.hasPrefix("multipart/form-data; boundary=courier-") == true)
    }

    @Test func templateExpansionReachesTheServer() async throws {
        let echo = try await executor.send(
            try HTTPBin.request()
                |> template("/anything/{kind}/{id}{?fields*,q}", ["kind": "users", "id": 42, "fields": ["a", "b"], "q": "x y&z"])
                |> decode(Echo.self))
        #expect(echo.url.hasSuffix("/anything/users/42?fields=a&fields=b&q=x%20y%26z"))
        #expect(echo.args["fields"] == .many(["a", "b"]))
        #expect(echo.args["q"] == .one("x y&z"))
    }

    @Test func preEncodedQueryIsNotEncodedTwice() async throws {
        let echo = try await executor.send(
            try HTTPBin.request() |> path("anything") |> query(percentEncoded: "cursor", "a%2Bb%3D%3D") |> decode(Echo.self))
        #expect(echo.args["cursor"] == .one("a+b=="))
    }

    @Test func nonASCIIHeaderValuesAreSentAsUTF8() async throws {
        struct Headers: Decodable, Sendable { var headers: [String: String] }
        let echo = try await executor.send(
            try HTTPBin.request() |> path("headers") |> header("X-Name", "Zoë") |> decode(Headers.self))
        // httpbin (WSGI) reads header bytes as Latin-1; UTF-8 "ë" arrives as "Ã«".
        let received = try #require(echo.headers["X-Name"])
        #expect(Data(received.utf8) == Data("ZoÃ«".utf8) || received == "Zoë")
    }
}
