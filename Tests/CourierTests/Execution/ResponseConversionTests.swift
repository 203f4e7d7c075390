import Foundation
import Testing

import Courier
@testable import CourierCore
@testable import CourierURLSession

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A response made from Foundation's converts its headers when they are first read: it must
/// behave exactly like one whose headers were converted at once.
@Suite("Response: Foundation's headers, converted on first read")
struct ResponseConversionTests {
    static let fields = [
        "Content-Type": "application/json", "Content-Length": "12", "Set-Cookie": "session=s3cr3t",
        "X-Request-ID": "abc", "ETag": "\"v1\"",
    ]

    static func foundation(_ fields: [String: String] = fields, status: Int = 200) throws -> HTTPURLResponse {
        let url = try #require(URL(string: "https://api.test/items"))
        return try #require(HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: fields))
    }

    @Test func readsLikeAnEagerConversion() throws {
        let http = try Self.foundation()
        let lazy = Response(http: http, body: Data("{\"id\":1}\n   ".utf8))
        let eager = Response(
            status: 200, headers: FoundationHeaders(http).convert(), body: Data("{\"id\":1}\n   ".utf8), url: http.url)
        let lazyHeaders: HTTPHeaders = lazy.headers
        let eagerHeaders: HTTPHeaders = eager.headers
        #expect(lazyHeaders == eagerHeaders)
        // In a stable order: by lower-cased name.
        let names: [String] = lazyHeaders.fields.map { (field: HTTPHeaders.Field) -> String in field.name.rawValue.lowercased() }
        let sortedNames: [String] = names.sorted()
        #expect(names == sortedNames)
        #expect(lazy.headers[.contentType] == "application/json")
        #expect(lazy.headers["x-request-id"] == "abc")
        #expect(lazy.contentType == .json)
        #expect(lazy == eager)
        #expect(lazy.hashValue == eager.hashValue)
        #expect(lazy.status == 200)
        #expect(lazy.url == http.url)
    }

    @Test func copiesShareTheConversionButNotChanges() throws {
        let original = Response(http: try Self.foundation(), body: Data())
        var copy = original
        copy.headers.set("X-Added", "1")
        copy.headers.remove(.contentType)
        #expect(original.headers["X-Added"] == nil)
        #expect(original.headers[.contentType] == "application/json")
        #expect(copy.headers["X-Added"] == "1")
        #expect(copy.headers[.contentType] == nil)
        #expect(copy != original)
    }

    @Test func concurrentFirstReadsAgree() async throws {
        let response = Response(http: try Self.foundation(), body: Data())
        let all = await withTaskGroup(of: HTTPHeaders.self) { group in
            for _ in 0..<32 { group.addTask { response.headers } }
            var seen: [HTTPHeaders] = []
            for await headers in group { seen.append(headers) }
            return seen
        }
        let counts: Set<Int> = Set(all.map { (headers: HTTPHeaders) -> Int in headers.fields.count })
        let expected: Set<Int> = [Self.fields.count]
        #expect(counts == expected)
        let first: HTTPHeaders = all[0]
        let agree: Bool = all.allSatisfy { (headers: HTTPHeaders) -> Bool in headers == first }
        #expect(agree)
    }

    @Test func secretsStayHiddenWhenPrinted() throws {
        let response = Response(http: try Self.foundation(), body: Data())
        var dumped = ""
        dump(response, to: &dumped)
        for text in [response.description, response.debugDescription, dumped, String(reflecting: response)] {
            #expect(!text.contains("s3cr3t"), "\(text)")
        }
        #expect(response.description.contains("X-Request-ID: abc"))
    }

    @Test(arguments: [
        (["Content-Length": "12"], 12), (["Content-Length": "0"], 0), (["Content-Length": "-3"], nil),
        (["Content-Length": "twelve"], nil), ([:], nil),
    ] as [([String: String], Int?)])
    func declaredLengthReadsWithoutConverting(fields: [String: String], expected: Int?) throws {
        let lazy = Response(http: try Self.foundation(fields), body: Data())
        #expect(lazy.declaredContentLength == expected)
        var converted = lazy
        converted.headers = lazy.headers
        #expect(converted.declaredContentLength == expected)
    }

    @Test func truncationIsStillCaught() throws {
        let short = Response(http: try Self.foundation(["Content-Length": "10"]), body: Data("12345".utf8))
        #expect(short.framingFailure(method: "GET")?.kind == .truncatedBody)
        #expect(short.framingFailure(method: "HEAD") == nil)
        let whole = Response(http: try Self.foundation(["Content-Length": "5"]), body: Data("12345".utf8))
        #expect(whole.framingFailure(method: "GET") == nil)
        let gzip = Response(
            http: try Self.foundation(["Content-Length": "10", "Content-Encoding": "gzip"]), body: Data("12345".utf8))
        #expect(gzip.framingFailure(method: "GET") == nil)
    }

    /// A transport answering every request with one Foundation response, as URLSession would.
    struct FoundationAnswer: Transport {
        let http: HTTPURLResponse
        func send(hop request: Request, options: StreamOptions) async throws -> StreamedResponse {
            StreamedResponse(Response(http: http, body: Data("{}".utf8)))
        }
    }

    @Test func loggedHeadersAreRedactedWhenFinallyRead() async throws {
        let http = try Self.foundation(["Set-Cookie": "sid=COOKIE-SECRET", "X-Session": "RESP-SESSION", "X-Plain": "shown"])
        let events = Locked<[LoggingMiddleware.Event]>([])
        let logging = LoggingMiddleware(redaction: Redaction(headers: ["X-Session"])) { event in
            events.withLock { $0.append(event) }
        }
        let response = try await Exchange(transport: FoundationAnswer(http: http)).with(logging).send(Request.get |> baseURL("https://api.test"))
        // The caller's response keeps every value.
        #expect(response.headers["set-cookie"] == "sid=COOKIE-SECRET")
        let logged: [LoggingMiddleware.Event] = events.withLock { $0 }
        let last = try #require(logged.last)
        let headers = try #require(last.responseHeaders)
        #expect(headers["set-cookie"] == Redaction.placeholder)
        #expect(headers["x-session"] == Redaction.placeholder)
        #expect(headers["x-plain"] == "shown")
        var dumped = ""
        dump(last, to: &dumped)
        let printed: String = "\(last) \(String(reflecting: last)) \(dumped) \(String(describing: last.response))"
        #expect(!printed.contains("COOKIE-SECRET"))
        #expect(!printed.contains("RESP-SESSION"))
    }
}

/// The one `Content-Length` parser every framing decision reads.
@Suite("Content-Length: one parser")
struct ContentLengthParserTests {
    @Test(arguments: [("0", 0), ("42", 42), (" 42 ", 42), ("\t7", 7), ("9223372036854775807", Int.max), ("007", 7)])
    func validLengthsAreRead(value: String, length: Int) {
        #expect(Response.contentLength(value) == length)
    }

    @Test(arguments: ["", " ", "+5", "-1", "5, 5", "5 5", "1.0", "0x10", "9223372036854775808", "99999999999999999999999", "٣", "5\r\n"])
    func anythingElseIsNoLength(value: String) {
        #expect(Response.contentLength(value) == nil)
    }

    @Test func aStreamedResponseAndTheFramingCheckReadTheSameLength() {
        let signed = StreamedResponse(status: 200, headers: ["Content-Length": "+3"], body: ByteStream(Data("abc".utf8)))
        #expect(signed.expectedLength == nil)
        let plain = StreamedResponse(status: 200, headers: ["Content-Length": " 3 "], body: ByteStream(Data("abc".utf8)))
        #expect(plain.expectedLength == 3)
        #expect(Response(status: 200, headers: ["Content-Length": "4"], body: Data("abc".utf8)).framingFailure(method: .get) != nil)
    }
}
