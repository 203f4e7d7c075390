import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Integration: HAR recording and pagination")
struct RecordingAndPaginationTests {
    struct Slideshow: Decodable, Sendable, Equatable {
        struct Show: Decodable, Sendable, Equatable {
            var title: String
            var author: String
        }
        var slideshow: Show
    }

    /// Everything one session against httpbin decodes, to compare live and replayed results.
    struct Results: Equatable {
        var args: [String: Arg]
        var slideshow: Slideshow
        var bytes: Data
        var posted: JSONValue?
        var teapotStatus: Int?
        var uuidHeader: String?
    }

    private func session(_ executor: any Executor) async throws -> Results {
        let echo = try await executor.send(
            try HTTPBin.request() |> path("anything") |> query("b", 2) |> query("a", "x y") |> query("token", "live-secret")
                |> bearer("s3cret-bearer") |> decode(Echo.self))
        let slideshow = try await executor.send(try HTTPBin.request() |> path("json") |> decode(Slideshow.self))
        let bytes = try await executor.send(try HTTPBin.request() |> path("bytes", 64) |> query("seed", 7) |> decodeData())
        let posted = try await executor.send(
            try HTTPBin.request(.post) |> path("anything") |> json(["name": "Zoë", "password": "pw-123"]) |> decode(Echo.self))
        let teapot = try await #require(throws: CourierError.self) {
            try await executor.send(try HTTPBin.request() |> path("status", 418) |> decodeEmpty())
        }
        let headers = try await executor.response(
            for: try HTTPBin.request() |> path("response-headers") |> query("X-Trace", "abc") |> decode([String: Arg].self))
        return Results(
            args: echo.args, slideshow: slideshow, bytes: bytes, posted: posted.json, teapotStatus: teapot.status,
            uuidHeader: headers.response.headers["X-Trace"])
    }

    /// Records a session against httpbin, writes the HAR file and replays the same session
    /// from the file alone.
    private func roundTrip(_ recorder: HARRecorder) async throws -> (live: Results, replayed: Results, file: String) {
        let live = try await session(HTTPBin.executor().with(recorder))
        #expect(live.bytes.count == 64)
        #expect(live.teapotStatus == 418)
        #expect(live.uuidHeader == "abc")
        #expect(recorder.entries.count == 6)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-httpbin-\(UUID().uuidString).har")
        defer { try? FileManager.default.removeItem(at: file) }
        try recorder.har.write(to: file)
        let text = try String(contentsOf: file, encoding: .utf8)
        // Replay knows nothing of the server: only the file.
        let replay = try HARReplayExecutor(contentsOf: file)
        let replayed = try await session(replay)
        #expect(replay.unusedEntries.isEmpty)
        return (live, replayed, text)
    }

    @Test func verbatimRecordingReplaysIdenticalResults() async throws {
        let (live, replayed, _) = try await roundTrip(HARRecorder(bodies: .verbatim))
        #expect(replayed == live)
    }

    @Test func redactedRecordingReplaysWithSecretsHidden() async throws {
        let (live, replayed, file) = try await roundTrip(HARRecorder())
        for secret in ["live-secret", "s3cret-bearer", "pw-123"] {
            #expect(!file.contains(secret), "\(secret) leaked into the recording")
        }
        // Everything but the redacted values is identical.
        var expected = live
        expected.args["token"] = .one("<redacted>")
        if case .object(var fields) = live.posted {
            fields["password"] = .string("<redacted>")
            expected.posted = .object(fields)
        }
        #expect(replayed == expected)
    }

    @Test func recordingIsValidHAR12ForOtherReaders() async throws {
        let recorder = HARRecorder()
        _ = try await HTTPBin.executor().with(recorder).send(try HTTPBin.request() |> path("anything") |> decode(Echo.self))
        let object = try JSONSerialization.jsonObject(with: try recorder.har.jsonData())
        let log = try #require((object as? [String: Any])?["log"] as? [String: Any])
        let entry = try #require((log["entries"] as? [[String: Any]])?.first)
        let request = try #require(entry["request"] as? [String: Any])
        let response = try #require(entry["response"] as? [String: Any])
        #expect(Set(request.keys).isSuperset(of: ["method", "url", "httpVersion", "cookies", "headers", "queryString", "headersSize", "bodySize"]))
        #expect(Set(response.keys).isSuperset(of: ["status", "statusText", "httpVersion", "cookies", "headers", "content", "redirectURL", "headersSize", "bodySize"]))
        #expect((response["headers"] as? [[String: String]])?.contains { $0["name"]?.lowercased() == "content-type" } == true)
        #expect(try HTTPBin.url().hasPrefix("http://127.0.0.1"))
        #expect((request["url"] as? String)?.hasPrefix(try HTTPBin.url()) == true)
    }

    @Test func paginatesByLinkHeaders() async throws {
        // /response-headers sets the headers it is given: page 1 links to page 2, whose own
        // query links to page 3, which has no link.
        let third = "</response-headers?page=3>; rel=\"next\""
        let second = "</response-headers?page=2&Link=\(PercentEncoding.queryValue(third))>; rel=\"next\""
        let first = try HTTPBin.request() |> path("response-headers") |> query("page", 1) |> query("Link", second)
            |> bearer("same-origin") |> decode([String: Arg].self)
        let executor = HTTPBin.executor()
        var numbers: [String] = []
        for try await page in executor.paginate(first, next: .linkHeader()) {
            if case .one(let number) = page.value["page"] { numbers.append(number) }
            #expect(page.request.headers[.authorization] == "Bearer same-origin")
        }
        #expect(numbers == ["1", "2", "3"])
    }

    /// The `<a href='…'>label</a>` links of an httpbin page, by label.
    private static func links(in html: String) -> [String: String] {
        var found: [String: String] = [:]
        for piece in html.components(separatedBy: "<a href='").dropFirst() {
            let parts = piece.components(separatedBy: "'>")
            guard parts.count > 1, let label = parts[1].components(separatedBy: "<").first else { continue }
            found[label] = parts[0]
        }
        return found
    }

    @Test func paginatesHTMLLinksWithALimit() async throws {
        // /links/5/N is an HTML page linking to the other four; follow "N+1" until there is none.
        let pages = try HTTPBin.request() |> path("links", 5, 0) |> decodeText()
        let next = PaginationStrategy<String>.nextURL { page in
            let current = Int((try? page.request.validatedURL())?.lastPathComponent ?? "") ?? 0
            return Self.links(in: page.value)[String(current + 1)]
        }
        var visited: [Int] = []
        for try await page in HTTPBin.executor().paginate(pages, next: next) {
            visited.append(Int(try page.request.validatedURL().lastPathComponent) ?? -1)
        }
        #expect(visited == [0, 1, 2, 3, 4])

        let error = try await #require(throws: CourierError.self) {
            for try await _ in HTTPBin.executor().paginate(pages, next: next, maxPages: 3) {}
        }
        guard case .tooManyPages(3) = error.cause else {
            Issue.record("unexpected \(error)")
            return
        }
    }
}

enum PercentEncoding {
    /// Encodes a string for use as a query value inside another URL.
    static func queryValue(_ string: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return string.addingPercentEncoding(withAllowedCharacters: allowed) ?? string
    }
}
