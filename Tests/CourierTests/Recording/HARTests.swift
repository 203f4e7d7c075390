import Courier
import Foundation
import Testing

@Suite("HAR recording and replay")
struct HARTests {
    private let backend = InMemoryExecutor(routes: [
        .init(.get, "/v1/users", .json([User(id: 1, name: "Ada")], headers: ["Set-Cookie": "session=abc123; Path=/; HttpOnly"])),
        .init(.get, "/v1/users/{id}") { _, parameters in .json(User(id: parameters.int("id") ?? 0, name: "user")) },
        .init(.post, "/v1/login", .json(["access_token": "tok-999", "kind": "bearer"])),
        .init(.put, "/v1/avatar", .status(200, headers: [.contentType: "image/png"], body: Data([0x89, 0x50, 0x4E, 0x47, 0x00, 0xFF]))),
        .init(.get, "/v1/avatar", .status(200, headers: [.contentType: "image/png"], body: Data([0x89, 0x50, 0x4E, 0x47, 0x00, 0xFF]))),
        .init(.get, "/v1/broken", .failure(URLError(.cannotConnectToHost))),
    ])

    /// The archive as generic JSON, the way another HAR reader sees it.
    private func genericJSON(_ har: HAR) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: try har.jsonData())
        return try #require(object as? [String: Any])
    }

    @Test func writesEveryFieldHAR12Requires() async throws {
        let recorder = HARRecorder()
        let executor = backend.with(recorder)
        _ = try await executor.send(Request.get |> baseURL(api) |> path("users") |> query("page", 2) |> decode([User].self))
        let root = try genericJSON(recorder.har)
        let log = try #require(root["log"] as? [String: Any])
        #expect(log["version"] as? String == "1.2")
        let creator = try #require(log["creator"] as? [String: Any])
        #expect(creator["name"] as? String == "Courier")
        #expect(creator["version"] is String)
        let entry = try #require((log["entries"] as? [[String: Any]])?.first)
        for key in ["startedDateTime", "time", "request", "response", "cache", "timings"] {
            #expect(entry[key] != nil, "entry.\(key)")
        }
        let started = try #require(entry["startedDateTime"] as? String)
        #expect(started.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil, "ISO 8601 with milliseconds: \(started)")
        let request = try #require(entry["request"] as? [String: Any])
        for key in ["method", "url", "httpVersion", "cookies", "headers", "queryString", "headersSize", "bodySize"] {
            #expect(request[key] != nil, "request.\(key)")
        }
        #expect(request["url"] as? String == "https://api.example.com/v1/users?page=2")
        #expect((request["queryString"] as? [[String: String]]) == [["name": "page", "value": "2"]])
        let response = try #require(entry["response"] as? [String: Any])
        for key in ["status", "statusText", "httpVersion", "cookies", "headers", "content", "redirectURL", "headersSize", "bodySize"] {
            #expect(response[key] != nil, "response.\(key)")
        }
        #expect(response["statusText"] as? String == "OK")
        let content = try #require(response["content"] as? [String: Any])
        #expect(content["size"] as? Int == 23)
        #expect(content["mimeType"] as? String == "application/json")
        let text = try #require(content["text"] as? String)
        #expect(try JSONDecoder().decode([User].self, from: Data(text.utf8)) == [User(id: 1, name: "Ada")])
        let timings = try #require(entry["timings"] as? [String: Any])
        for key in ["send", "wait", "receive"] { #expect(timings[key] is Double || timings[key] is Int, "timings.\(key)") }
        let time = try #require(entry["time"] as? Double)
        // HAR 1.2: the sum of the timings that are not -1, `ssl` excepted (it is inside `connect`).
        let sum = ["blocked", "dns", "connect", "send", "wait", "receive"].compactMap { timings[$0] as? Double }.filter { $0 >= 0 }.reduce(0, +)
        #expect(abs(time - sum) < 0.001, "time is the sum of the known timings")
    }

    @Test func redactsLikeLoggingByDefault() async throws {
        let recorder = HARRecorder(redaction: Redaction(headers: ["X-Session"]))
        let executor = backend.with(recorder)
        _ = try await executor.send(
            Request.get |> baseURL("https://ada:pa55@api.example.com/v1") |> path("users") |> query("api_key", "k-123")
                |> bearer("b-456") |> header("X-Session", "s-789") |> header("Cookie", "sid=c-000; theme=dark"))
        _ = try await executor.send(
            Request.post |> baseURL(api) |> path("login") |> json(["user": "ada", "password": "hunter2"]))
        let text = String(decoding: try recorder.har.jsonData(), as: UTF8.self)
        for secret in ["pa55", "k-123", "b-456", "s-789", "c-000", "hunter2", "tok-999", "abc123"] {
            #expect(!text.contains(secret), "\(secret) leaked into the HAR")
        }
        let first = recorder.entries[0]
        #expect(first.request.url == "https://<redacted>@api.example.com/v1/users?api_key=<redacted>")
        #expect(first.request.queryString == [HAR.NameValue(name: "api_key", value: "<redacted>")])
        #expect(first.request.headers.first { $0.name == "Authorization" }?.value == "<redacted>")
        #expect(first.request.cookies.map(\.name) == ["sid", "theme"])
        #expect(first.response.cookies.first?.name == "session")
        #expect(first.response.cookies.first?.httpOnly == true)
        let posted: String = recorder.entries[1].request.postData?.text ?? ""
        #expect(posted.contains(#""user":"ada""#))
    }

    /// A recording lists the cookies a server reading bytes sees: `;` and a combining mark
    /// after it are one Character, and splitting on Characters made two cookies one.
    @Test func cookiesAreSplitOnTheSemicolonByte() async throws {
        let recorder = HARRecorder()
        let executor = InMemoryExecutor { _ in
            .status(200, headers: [.setCookie: "id=1;\u{301} Path=/p;\u{301} HttpOnly"], body: Data("ok".utf8))
        }.with(recorder)
        _ = try await executor.send(Request.get |> baseURL(api) |> header("Cookie", "sid=c-000;\u{301} theme=dark"))
        let entry = try #require(recorder.entries.first)
        #expect(entry.request.cookies.map(\.name) == ["sid", "\u{301} theme"])
        #expect(entry.request.cookies.allSatisfy { $0.value == Redaction.placeholder })
        #expect(entry.response.cookies.map(\.name) == ["id"])
        #expect(entry.response.cookies.first?.value == Redaction.placeholder)
    }

    @Test func redactedEchoBodiesStayValidJSON() async throws {
        // An echo server's answer: the URL with a secret query value, and the posted JSON
        // body inside a string.
        let echo = #"{"url": "http://h.test/anything?b=2&token=live-secret&c=3", "data": "{\"name\":\"Zoë\",\"password\":\"pw-123\"}"}"#
        let recorder = HARRecorder()
        _ = try await InMemoryExecutor { _ in .text(echo, contentType: .json) }.with(recorder).send(Request.get |> baseURL(api))
        let text = try #require(recorder.entries.first?.response.content.text)
        #expect(!text.contains("live-secret") && !text.contains("pw-123"))
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: String]
        #expect(object?["url"] == "http://h.test/anything?b=2&token=<redacted>&c=3")
        #expect(object?["data"] == #"{"name":"Zoë","password":"<redacted>"}"#)
    }

    @Test func verbatimKeepsBodiesAndOmittedDropsThem() async throws {
        let verbatim = HARRecorder(bodies: .verbatim)
        _ = try await backend.with(verbatim).send(Request.post |> baseURL(api) |> path("login") |> text("password=hunter2"))
        #expect(verbatim.entries[0].request.postData?.text == "password=hunter2")
        #expect(verbatim.entries[0].response.content.text?.contains("tok-999") == true)
        let omitted = HARRecorder(bodies: .omitted)
        _ = try await backend.with(omitted).send(Request.post |> baseURL(api) |> path("login") |> text("password=hunter2"))
        #expect(omitted.entries[0].request.postData?.text == "")
        #expect(omitted.entries[0].request.bodySize == 16)
        #expect(omitted.entries[0].response.content.text == nil)
        #expect(omitted.entries[0].response.content.size > 0)
    }

    @Test func binaryBodiesAreBase64() async throws {
        let recorder = HARRecorder()
        let executor = backend.with(recorder)
        _ = try await executor.send(Request.put |> baseURL(api) |> path("avatar") |> body(Data([0, 1, 2]), contentType: .octetStream))
        let entry = try #require(recorder.entries.first)
        #expect(entry.response.content.encoding == "base64")
        #expect(entry.response.content.data == Data([0x89, 0x50, 0x4E, 0x47, 0x00, 0xFF]))
        #expect(entry.request.postData?._encoding == "base64")
        #expect(entry.request.postData?.data == Data([0, 1, 2]))
    }

    @Test func formBodiesListTheirParams() async throws {
        let recorder = HARRecorder()
        _ = try await backend.with(recorder).send(Request.post |> baseURL(api) |> path("login") |> form(["user": "ada lovelace", "lang": "en"]))
        let params = recorder.entries[0].request.postData?.params ?? []
        #expect(params.map(\.name) == ["user", "lang"])
        #expect(params.map(\.value) == ["ada lovelace", "en"])
    }

    @Test func failuresAreRecordedWithStatusZero() async throws {
        let recorder = HARRecorder()
        _ = await expectCourierError { _ = try await backend.with(recorder).send(Request.get |> baseURL(api) |> path("broken") |> bearer("zz-top")) }
        let entry = try #require(recorder.entries.first)
        #expect(entry.response.status == 0)
        #expect(entry._error?.isEmpty == false)
        #expect(entry._error?.contains("zz-top") == false)
    }

    @Test func entriesKeepTheOrderRequestsStarted() async throws {
        let slow = InMemoryExecutor { request in
            request.pathSegments.last == "1" ? Stub.status(200).delayed(by: .milliseconds(50)) : .status(200)
        }
        let recorder = HARRecorder()
        let executor = slow.with(recorder)
        async let first = executor.send(Request.get |> baseURL(api) |> path("1"))
        // The first has started (the recorder saw it before the executor did) before the second.
        await waitUntil { slow.requests.count == 1 }
        async let second = executor.send(Request.get |> baseURL(api) |> path("2"))
        _ = try await (first, second)
        let urls: [String] = recorder.entries.map(\.request.url)
        #expect(urls == ["\(api)/1", "\(api)/2"])
        recorder.reset()
        #expect(recorder.entries.isEmpty)
    }

    // MARK: Replay

    @Test func roundTripThroughAFileGivesIdenticalResults() async throws {
        let recorder = HARRecorder()
        let live = backend.with(recorder)
        let list = Request.get |> baseURL(api) |> path("users") |> query("page", 1) |> query("sort", "name") |> decode([User].self)
        let one = Request.get |> baseURL(api) |> path("users", 7) |> decode(User.self)
        let avatar = Request.get |> baseURL(api) |> path("avatar") |> decodeData()
        let recorded = (try await live.send(list), try await live.send(one), try await live.send(avatar))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID().uuidString).har")
        defer { try? FileManager.default.removeItem(at: file) }
        try recorder.har.write(to: file)

        let replay = try HARReplayExecutor(contentsOf: file)
        let reordered = Request.get |> baseURL(api) |> path("users") |> query("sort", "name") |> query("page", 1) |> decode([User].self)
        #expect(try await replay.send(reordered) == recorded.0, "query order does not matter")
        #expect(try await replay.send(one) == recorded.1)
        #expect(try await replay.send(avatar) == recorded.2)
        #expect(replay.unusedEntries.isEmpty)
    }

    /// A redacted body is shorter than the one that arrived: its recorded `Content-Length` must
    /// not frame the replay (the exchange would call it truncated).
    @Test func aRedactedBodyReplaysDespiteItsRecordedLength() async throws {
        let echoed = Data(#"{"token":"live-secret-0123456789","name":"Ada"}"#.utf8)
        let origin = InMemoryExecutor { _ in
            .status(200, headers: ["Content-Type": "application/json", "Content-Length": String(echoed.count)], body: echoed)
        }
        let recorder = HARRecorder()
        _ = try await origin.with(recorder).send(Request.get |> baseURL(api) |> path("me") |> bearer("live-secret-0123456789"))
        let replayed = try await HARReplayExecutor(recorder.har).send(Request.get |> baseURL(api) |> path("me"))
        let text = String(decoding: replayed.body, as: UTF8.self)
        #expect(!text.contains("live-secret") && text.contains("Ada"))
        #expect(replayed.headers[.contentLength] == String(replayed.body.count))
    }

    @Test func redactedQueryValuesMatchAnyValue() async throws {
        let recorder = HARRecorder()
        _ = try await backend.with(recorder).send(Request.get |> baseURL(api) |> path("users") |> query("token", "live-secret"))
        let replay = HARReplayExecutor(recorder.har)
        let users = try await replay.send(Request.get |> baseURL(api) |> path("users") |> query("token", "other") |> decode([User].self))
        #expect(users == [User(id: 1, name: "Ada")])
    }

    @Test func repeatedRequestsReplayInRecordedOrderThenRepeatTheLast() async throws {
        let changing = InMemoryExecutor.scripted([.json([1]), .json([1, 2])], then: .json([1, 2, 3]))
        let recorder = HARRecorder()
        let numbers = Request.get |> baseURL(api) |> path("numbers") |> decode([Int].self)
        for _ in 1...2 { _ = try await changing.with(recorder).send(numbers) }
        let replay = HARReplayExecutor(recorder.har)
        #expect(try await replay.send(numbers) == [1])
        #expect(try await replay.send(numbers) == [1, 2])
        #expect(try await replay.send(numbers) == [1, 2])
    }

    @Test func unmatchedRequestNamesTheClosestEntry() async throws {
        let recorder = HARRecorder()
        _ = try await backend.with(recorder).send(Request.get |> baseURL(api) |> path("users"))
        _ = try await backend.with(recorder).send(Request.get |> baseURL(api) |> path("users", 7) |> query("expand", "posts"))
        let replay = HARReplayExecutor(recorder.har)
        let error = await expectCourierError {
            _ = try await replay.send(Request.get |> baseURL(api) |> path("users", 7) |> query("expand", "friends") |> query("secret", "s3"))
        }
        guard case .unanswered(let message) = error?.cause else {
            Issue.record("unexpected \(String(describing: error))")
            return
        }
        #expect(message.contains("closest is entry 1, GET https://api.example.com/v1/users/7?expand=posts"))
        #expect(message.contains("query expand=posts was recorded, expand=friends&secret=<redacted> was sent"))
        #expect(!message.contains("s3"))
        let wrongMethod = await expectCourierError { _ = try await replay.send(Request.delete |> baseURL(api) |> path("users")) }
        #expect(wrongMethod?.description.contains("method GET was recorded, DELETE was sent") == true)
    }

    @Test func bodiesMatchWhenAsked() async throws {
        let recorder = HARRecorder()
        let login = { (password: String) in Request.post |> baseURL(api) |> path("login") |> json(["user": "ada", "password": password]) }
        _ = try await backend.with(recorder).send(login("hunter2"))
        let strict = HARReplayExecutor(recorder.har, matchingBodies: true)
        // The recording holds the redacted body; a body that redacts the same way matches.
        #expect(try await strict.send(login("another")).status == 200)
        let other = Request.post |> baseURL(api) |> path("login") |> json(["user": "bob", "password": "x"])
        let error = await expectCourierError { _ = try await strict.send(other) }
        #expect(error?.description.contains("the body differs") == true)
        #expect(try await HARReplayExecutor(recorder.har).send(other).status == 200, "bodies are ignored by default")
    }

    @Test func recordedFailuresReplayAsTransportFailures() async throws {
        let recorder = HARRecorder()
        _ = await expectCourierError { _ = try await backend.with(recorder).send(Request.get |> baseURL(api) |> path("broken")) }
        let error = await expectCourierError { _ = try await HARReplayExecutor(recorder.har).send(Request.get |> baseURL(api) |> path("broken")) }
        guard case .transport = error?.cause else {
            Issue.record("unexpected \(String(describing: error))")
            return
        }
    }

    @Test func readsAMinimalBrowserStyleArchive() async throws {
        let browser = Data(
            """
            \u{FEFF}{"log": {"version": "1.2", "creator": {"name": "WebInspector", "version": "537.36"},
              "pages": [{"startedDateTime": "2026-01-01T00:00:00.000Z", "id": "page_1", "title": "x", "pageTimings": {}}],
              "entries": [{"startedDateTime": "2026-01-01T00:00:00.000Z", "time": 12.5,
                "request": {"method": "GET", "url": "http://127.0.0.1:8080/get?b=2&a=1", "httpVersion": "http/1.1",
                            "headers": [], "queryString": [], "cookies": [], "headersSize": -1, "bodySize": 0},
                "response": {"status": 200, "statusText": "OK", "httpVersion": "http/1.1", "headers": [{"name": "Content-Type", "value": "text/plain"}],
                             "cookies": [], "content": {"size": 2, "mimeType": "text/plain", "text": "aGk=", "encoding": "base64"},
                             "redirectURL": "", "headersSize": -1, "bodySize": 2},
                "cache": {}, "timings": {"send": 1, "wait": 10, "receive": 1.5}, "_initiator": {"type": "other"}}]}}
            """.utf8)
        let replay = try HARReplayExecutor(HAR(data: browser))
        let text = try await replay.send(Request.get |> baseURL("http://127.0.0.1:8080") |> path("get") |> query("a", 1) |> query("b", 2) |> decodeText())
        #expect(text == "hi")
    }

    @Test func invalidArchivesAreTypedErrorsThatSayWhy() throws {
        let missing = #expect(throws: CourierError.self) { try HAR(data: Data(#"{"log": {"version": "1.2", "creator": {"name": "x", "version": "1"}}}"#.utf8)) }
        #expect(missing?.description.contains(#"at log: missing key "entries""#) == true)
        let notJSON = #expect(throws: CourierError.self) { try HAR(data: Data("<html>".utf8)) }
        guard case .invalidRecording = notJSON?.cause else {
            Issue.record("unexpected \(String(describing: notJSON))")
            return
        }
        let absent = #expect(throws: CourierError.self) {
            try HARReplayExecutor(contentsOf: URL(fileURLWithPath: "/nonexistent/courier.har"))
        }
        #expect(absent?.description.contains("cannot read /nonexistent/courier.har") == true)
    }

    @Test func emptyRecordingSaysSo() async throws {
        let error = await expectCourierError { _ = try await HARReplayExecutor(HAR(log: HAR.Log())).send(Request.get |> baseURL(api)) }
        #expect(error?.description.contains("the recording has no entries") == true)
    }
}
