import CourierCaching
import CourierCookies
import CourierCore
import CourierResilience
import CourierTesting
import CourierWebSocket
import Foundation

/// The step-by-step walk through Courier. Every step checks what it got; any surprise ends the
/// tour with a non-zero exit status.
struct Tour {
    let executor: any Executor
    let base: String
    let recorder: InMemoryExecutor?

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private func step(_ title: String) {
        print("\n== \(title)")
    }

    private func check(_ condition: Bool, _ message: @autoclosure () -> String) throws {
        guard condition else { throw Failure(description: message()) }
        print("   ✓ \(message())")
    }

    func run() async throws {
        step("1. A request is a plain value, built by composing builders")
        let listing = Request.get |> baseURL(base) |> path("anything", "notes") |> query("page", 2)
            |> query("q", "a+b c&d") |> accept(.json) |> bearer("tour-secret-token")
        print(listing.description.split(separator: "\n").map { "   " + $0 }.joined(separator: "\n"))
        let url = try listing.validatedURL()
        print("   URL: \(url.absoluteString)")
        try check(!listing.description.contains("tour-secret-token"), "the description hides the bearer token")
        try check(url.absoluteString.hasSuffix("/anything/notes?page=2&q=a%2Bb%20c%26d"), "the query is percent-encoded")

        step("2. Add a decoder to get a typed Resource, then send it")
        let echo = try await executor.send(listing |> decode(Echo.self))
        print("   server saw args: \(echo.args.sorted { $0.key < $1.key })")
        try check(echo.args["q"] == "a+b c&d", "the server read back exactly \"a+b c&d\"")
        try check(echo.method == "GET", "the method arrived as GET")

        step("3. POST a JSON body")
        let note = Note(title: "Groceries", body: "Milk & eggs")
        let created = try await executor.send(
            Request.post |> baseURL(base) |> path("anything", "notes") |> json(note) |> decode(Echo.self))
        try check(created.json == note, "the server decoded the same note")

        step("4. POST a form")
        let form = try await executor.send(
            Request.post |> baseURL(base) |> path("anything") |> form(["name": "Zoë", "motto": "a b+c"])
                |> decode(Echo.self))
        try check(form.form == ["name": "Zoë", "motto": "a b+c"], "the form fields arrived intact")

        step("5. Bearer authentication")
        let auth = try await executor.send(
            Request.get |> baseURL(base) |> path("bearer") |> bearer("tour-token") |> decode(BearerCheck.self))
        try check(auth.authenticated && auth.token == "tour-token", "the server accepted the bearer token")

        step("6. A 404 is a typed error you can switch on")
        do {
            _ = try await executor.send(Request.get |> baseURL(base) |> path("status", 404) |> decode(Echo.self))
            throw Failure(description: "a 404 decoded successfully")
        } catch let error as CourierError {
            print("   \(error)")
            guard case .unacceptableStatus(404, _) = error.cause else { throw error }
            try check(true, "the cause is .unacceptableStatus(404, …)")
        }

        step("7. 204 No Content")
        let empty = try await executor.response(
            for: Request.delete |> baseURL(base) |> path("status", 204) |> decodeEmpty())
        try check(empty.response.status == 204, "decodeEmpty() accepts the empty 204")

        step("8. Bad input is never sent")
        let before = recorder?.requests.count ?? 0
        do {
            _ = try await executor.send(
                Request.get |> baseURL(base) |> path("anything", "..") |> header("X-Note", "line\r\nInjected: yes")
                    |> decodeData())
            throw Failure(description: "an invalid request was sent")
        } catch let error as CourierError {
            print("   \(error)")
            guard case .invalidRequest(let problems) = error.cause else { throw error }
            try check(problems.map(\.kind) == [.invalidPathSegment, .invalidHeaderValue], "both problems are reported")
            if let recorder { try check(recorder.requests.count == before, "nothing reached the executor") }
        }

        step("9. Middleware: default headers and logging, secrets redacted")
        let lines = LogLines()
        let logged = executor.with(
            DefaultHeadersMiddleware([.userAgent: "CourierPlayground/1.0"]),
            LoggingMiddleware { lines.append($0.description) })
        let headers = try await logged.send(
            Request.get |> baseURL(base) |> path("headers") |> query("token", "query-secret") |> bearer("header-secret")
                |> decode([String: [String: String]].self))
        for line in lines.all { print("   log: \(line)") }
        try check(headers["headers"]?["User-Agent"] == "CourierPlayground/1.0", "the default User-Agent was added")
        try check(!lines.all.joined().contains("secret"), "the log shows no secret")

        step("10. Completion handlers, for code without async")
        let result = await withCheckedContinuation { (done: CheckedContinuation<Result<Echo, CourierError>, Never>) in
            executor.send(Request.get |> baseURL(base) |> path("anything") |> query("via", "callback") |> decode(Echo.self)) {
                done.resume(returning: $0)
            }
        }
        try check((try? result.get())?.args["via"] == "callback", "the completion got the decoded echo")

        step("11. Record traffic to a HAR file, then replay it with no server")
        let har = HARRecorder()
        let recording = executor.with(har)
        let notes = Request.get |> baseURL(base) |> path("anything", "notes") |> query("token", "har-secret")
            |> decode(Echo.self)
        let original = try await recording.send(notes)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-tour-\(UUID().uuidString).har")
        defer { try? FileManager.default.removeItem(at: file) }
        try har.har.write(to: file)
        let archive = try String(contentsOf: file, encoding: .utf8)
        print("   wrote \(har.entries.count) entry, \(archive.utf8.count) bytes: \(file.lastPathComponent)")
        try check(!archive.contains("har-secret"), "the HAR file holds no secret")
        let replayed = try await HARReplayExecutor(contentsOf: file).send(notes)
        print("   replayed echo url: \(replayed.url)")
        try check(
            replayed.method == original.method
                && replayed.url == original.url.replacingOccurrences(of: "har-secret", with: "<redacted>"),
            "the replay answered from the file, with the recorded secret still redacted")
        do {
            _ = try await HARReplayExecutor(contentsOf: file).send(Request.delete |> baseURL(base))
            throw Failure(description: "an unrecorded request was answered")
        } catch let error as CourierError {
            guard case .unanswered(let message) = error.cause else { throw error }
            print("   unmatched: \(message)")
            try check(true, "an unrecorded request is a typed error naming the closest entry")
        }

        step("12. Paginate by Link header, fetching each page only when needed")
        // /response-headers echoes the headers it is given: page 1 links to page 2, which links
        // to page 3, which links nowhere.
        let third = "</response-headers?page=3>; rel=\"next\""
        let second = "</response-headers?page=2&Link=\(third.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")>; rel=\"next\""
        let firstPage = Request.get |> baseURL(base) |> path("response-headers") |> query("page", 1)
            |> query("Link", second) |> decode([String: String].self)
        var pageNumbers: [String] = []
        for try await page in executor.paginate(firstPage, next: .linkHeader(), maxPages: 10) {
            print("   page \(page.number): \(try page.request.validatedURL().absoluteString.prefix(80))")
            pageNumbers.append(page.value["page"] ?? "?")
        }
        try check(pageNumbers == ["1", "2", "3"], "three pages, then the sequence ended")

        step("13. Stream a JSON Lines body, one value at a time")
        let jsonLines = try await executor.stream(Request.get |> baseURL(base) |> path("stream", 5))
        var ids: [Int] = []
        for try await line in jsonLines.body.ndjson(StreamLine.self) {
            print("   line \(line.id) arrived")
            ids.append(line.id)
        }
        try check(ids == [0, 1, 2, 3, 4], "five lines, decoded as they arrived")

        step("14. Server-sent events, ending at a [DONE] marker")
        // httpbin has no event stream, so a live tour streams this one from memory.
        let events = recorder ?? OfflineServer.executor()
        let chat = try await events.stream(Request.post |> baseURL("https://httpbin.example") |> path("events"))
        var text = ""
        for try await delta in chat.body.serverSentEvents(until: { $0.data == "[DONE]" }).decode(ChatDelta.self) {
            text += delta.text
        }
        print("   assembled: \(text)")
        try check(text == "Streaming arrives word by word.", "every event before [DONE], decoded")

        step("15. Download to a file, with a progress line")
        let size = recorder == nil ? 102_400 : 1 << 20  // httpbin's /bytes stops at 100 KiB
        let target = FileManager.default.temporaryDirectory.appendingPathComponent("courier-tour-\(UUID().uuidString).bin")
        defer { try? FileManager.default.removeItem(at: target) }
        let progress = TransferProgress()
        let reporter = Task {
            var last = -1
            for await snapshot in progress.updates {
                let percent = Int((snapshot.fractionCompleted ?? 0) * 100)
                if percent / 25 != last / 25 || snapshot.isFinished {
                    print("   progress: \(snapshot)")
                    last = percent
                }
            }
        }
        let download = try await executor.download(
            Request.get |> baseURL(base) |> path("bytes", size), to: target, options: DownloadOptions(progress: progress))
        await reporter.value
        let onDisk = (try FileManager.default.attributesOfItem(atPath: target.path)[.size] as? NSNumber)?.intValue
        try check(download.size == Int64(size) && onDisk == size, "\(size) bytes streamed to disk, never held whole in memory")

        step("16. Cookies: a jar that sees every hop")
        let jar = CookieStore()
        let withCookies = executor.eachHop(CookieMiddleware(jar))  // every hop, redirects included
        let echoed = try await withCookies.send(
            Request.get |> baseURL(base) |> path("cookies", "set") |> query("flavour", "oatmeal") |> decode(CookieEcho.self))
        try check(echoed.cookies["flavour"] == "oatmeal", "a cookie set on a 302 went with the next hop")
        try check(!"\(jar)".contains("oatmeal"), "the jar prints without values: \(jar.jar.cookies.map(\.name))")

        step("17. An HTTP cache: the second answer costs no round trip")
        let cached = executor.eachHop(HTTPCache())
        let fetched = try await cached.send(Request.get |> baseURL(base) |> path("cache", 60))
        let reused = try await cached.send(Request.get |> baseURL(base) |> path("cache", 60))
        try check(
            fetched.cacheStatus == .miss && reused.cacheStatus == .hit,
            "first from the origin, then from the cache (Age: \(reused.headers[.age] ?? "-"))")

        step("18. Resilience: rehearse an outage without touching the server")
        // The fault is injected inside the stack (nothing is sent for /status), the breaker
        // counts it, and the decisions are logged by the middleware outside.
        let decisions = LogLines()
        let outage = FaultInjection([.init(.status(503), when: { $0.path.hasPrefix("/status") })])
        let breaker = CircuitBreaker(policy: .init(failureRatio: 1, minimumCalls: 3, breakDuration: .seconds(30)))
        let retry = RetryMiddleware(policy: RetryPolicy(maxAttempts: 2, baseDelay: .milliseconds(1)), budget: RetryBudget())
        let resilient = executor.with(outage)
            .with(resilience: ResilienceStack(retry: retry, breaker: breaker))
            .with(LoggingMiddleware { event in if event.kind == .resilience { decisions.append("\(event)") } })
        let sentBefore = recorder?.requests.count
        var outcomes: [String] = []
        for _ in 0..<3 {
            do {
                outcomes.append("\(try await resilient.send(Request.get |> baseURL(base) |> path("status", 200)).status)")
            } catch {
                outcomes.append(error.errorType)
            }
        }
        try check(outcomes == ["503", "circuitOpen", "circuitOpen"], "503 twice (a retry), then the breaker opened: \(outcomes)")
        try check(recorder?.requests.count == sentBefore, "no request reached the server")
        for line in decisions.all { print("   \(line)") }

        step("19. A WebSocket: the handshake is a request, the socket has the same guarantees")
        // A chat server in memory (httpbin has no WebSocket, so this step is offline either way):
        // it answers each message in upper case, then closes when the client does.
        let chatServer = InMemoryExecutor(routes: [
            .init(.get, "/chat", .webSocket(subprotocol: "chat.v1") { peer in
                while let message = try await peer.receiveMessage() {
                    if case .text(let text) = message { try await peer.send(.text(text.uppercased())) }
                }
            })
        ])
        let socket = try await chatServer.webSocket(
            Request.get |> CourierCore.url("wss://chat.example/chat") |> bearer("tour-secret-token"),
            options: WebSocketOptions(subprotocols: ["chat.v1"]))
        try check(socket.subprotocol == "chat.v1", "the server chose the subprotocol chat.v1")
        try await socket.send(.text("milk & eggs"))
        var replies = socket.messages.makeAsyncIterator()
        let reply = try await replies.next()
        try check(reply == .text("MILK & EGGS"), "a message went out and its answer came back: \(reply.map { "\($0)" } ?? "none")")
        try await socket.close(reason: "tour over")
        let closed = try await socket.closed
        try check(closed.initiator == .client && closed.code == .normalClosure, "\(closed)")
        // The same server, its answers handed to a handler as they arrive (on CourierNIO, on the
        // connection's event loop: no task resumed a message), sent with `enqueue`, which never waits.
        let (answers, feed) = AsyncStream.makeStream(of: WebSocketMessage.self)
        let handled = try await chatServer.webSocket(
            Request.get |> CourierCore.url("wss://chat.example/chat"), options: WebSocketOptions(subprotocols: ["chat.v1"])
        ) { _, message in
            feed.yield(message)
        }
        for item in ["bread", "jam"] { try handled.enqueue(.text(item)) }
        var heard: [WebSocketMessage] = []
        for await answer in answers {
            heard.append(answer)
            if heard.count == 2 { break }
        }
        try check(heard == [.text("BREAD"), .text("JAM")], "a handler heard the answers in order: \(heard)")
        try await handled.close()

        if let recorder {
            print("\n== The in-memory executor recorded \(recorder.requests.count) requests:")
            for request in recorder.requests { print("   \(request.method.rawValue) \(request.path)") }
        }
    }
}

/// Log lines collected from any thread.
final class LogLines: Sendable {
    private let storage = Storage()

    func append(_ line: String) { storage.append(line) }
    var all: [String] { storage.all }

    /// `@unchecked Sendable` is sound: `lines` is only touched while `lock` is held.
    private final class Storage: @unchecked Sendable {
        private let lock = NSLock()
        private var lines: [String] = []
        func append(_ line: String) {
            lock.lock()
            lines.append(line)
            lock.unlock()
        }
        var all: [String] {
            lock.lock()
            defer { lock.unlock() }
            return lines
        }
    }
}
