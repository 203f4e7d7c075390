import CourierCore
import CourierResilience
import CourierTesting
import Foundation

extension ConformanceSuite {
    /// A streamed body is held to the length its request declares: never a byte past it, never a
    /// whole request from a body that breaks it, never a second request smuggled behind it.
    /// Judged by what a listener of the case's own (`scripts/upload_listener.py`) received on
    /// each connection, byte for byte.
    static let uploadBounds: [ConformanceCase] = [
        ConformanceCase("uploads: a sequence longer than its length sends no byte past it, and no request behind it") { context in
            let executor = context.executor()
            let smuggled = Data("GET /smuggled HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
            let body = Data(repeating: UInt8(ascii: "A"), count: 1_000)
            let producers: [(String, [Data])] = [
                ("the extra bytes in the last chunk", [body + smuggled]),
                ("the extra bytes across two chunks", [body.prefix(990), body.suffix(10) + smuggled]),
                ("the declared length, then a chunk more", [body, smuggled]),
            ]
            for (name, chunks) in producers {
                let listener = try await UploadListener.open(context)
                let error = try await context.error {
                    _ = try await executor.send(.post |> url(listener.url + "/upload") |> upload(Chunks(chunks), length: 1_000))
                }
                try context.expectFraming(error, saying: "more than", name)
                try context.expectNeverWhole(try await listener.settled(), declared: 1_000, name)
            }
            // The control: a body of its length arrives whole.
            let listener = try await UploadListener.open(context)
            let sent = try await executor.send(.post |> url(listener.url + "/upload") |> upload(Chunks([body.prefix(400), body.suffix(600)]), length: 1_000))
            try context.expect(sent.status == 200, "a body of its declared length: status \(sent.status)")
            let requests = try await listener.state().connections.flatMap(\.requests)
            try context.expect(
                requests.count == 1 && requests[0].complete && requests[0].received == 1_000,
                "a body of its declared length arrived as \(requests)")
        },
        ConformanceCase("uploads: a sequence shorter than its length fails, and the server never takes it for whole") { context in
            let executor = context.executor()
            let listener = try await UploadListener.open(context)
            let error = try await context.error {
                _ = try await executor.send(
                    .post |> url(listener.url + "/upload") |> upload(Chunks([Data(count: 500), Data(count: 400)]), length: 1_000))
            }
            try context.expectFraming(error, saying: "produced 900 bytes", "a sequence of 900 bytes declared as 1000")
            try context.expectNeverWhole(try await listener.settled(), declared: 1_000, "a sequence of 900 bytes declared as 1000")
        },
        ConformanceCase("uploads: a file that grows or shrinks while it is uploaded fails, with no byte past its length sent") { context in
            // The listener reads nothing until the file has changed: by then the transport has
            // taken the file's length (its first bytes are out) and cannot have read the file to
            // its end (16 MiB is far more than the connection's buffers hold).
            let size = 16 << 20
            for grows in [true, false] {
                let what = grows ? "a file that grows" : "a file that shrinks"
                let file = temporaryFile()
                defer { cleanUp(file) }
                try Data(repeating: 0x46, count: size).write(to: file)
                let listener = try await UploadListener.open(context, hold: true)
                let progress = TransferProgress()
                let executor = context.executor()
                let sending = Task {
                    let response = try await executor.stream(
                        .post |> url(listener.url + "/upload") |> upload(file), options: StreamOptions(uploadProgress: progress))
                    response.body.cancel()
                }
                for await snapshot in progress.updates where snapshot.completed > 0 || snapshot.isFinished { break }
                let handle = try FileHandle(forWritingTo: file)
                if grows {
                    try handle.seekToEnd()
                    try handle.write(contentsOf: Data(repeating: 0x47, count: 1 << 20))
                } else {
                    try handle.truncate(atOffset: UInt64(1 << 20))
                }
                try handle.close()
                try await listener.release()
                guard case .failure(let thrown) = await sending.result else {
                    throw context.failure("\(what): the upload succeeded; the server received \(try await listener.settled().connections.map(\.requests))")
                }
                let error = try await context.error { throw thrown }
                try context.expectFraming(error, saying: grows ? "grew" : "shrank", what)
                // URLSession on Linux cannot stop its own file upload mid-body safely: a file that
                // grew is sent as announced (never a byte more) and the call fails after.
                try context.expectNothingPast(try await listener.settled(), declared: size, what)
            }
        },
    ]
}

/// Chunks handed over one by one, as a producer yields them.
private struct Chunks: AsyncSequence, Sendable {
    typealias Element = Data
    let chunks: [Data]

    init(_ chunks: [Data]) { self.chunks = chunks }

    func makeAsyncIterator() -> Iterator { Iterator(chunks: chunks) }

    struct Iterator: AsyncIteratorProtocol {
        let chunks: [Data]
        var index = 0

        mutating func next() async -> Data? {
            guard index < chunks.count else { return nil }
            defer { index += 1 }
            return chunks[index]
        }
    }
}

/// A loopback listener of the case's own that records what each connection received
/// (`/upload-bounds/` on the hostile server).
struct UploadListener: Sendable {
    let port: Int
    let context: ConformanceContext
    let control: any Executor

    /// What one request on a connection brought.
    struct Received: Decodable, Sendable, CustomStringConvertible {
        var method: String
        var target: String
        /// Its `Content-Length`.
        var declared: Int?
        var chunked: Bool
        /// Body bytes read (at most the declared length: what follows is the next request).
        var received: Int
        /// Whether its body arrived whole, so the server answered it.
        var complete: Bool

        var description: String {
            "\(method) \(target) (declared \(declared.map(String.init) ?? "none"), received \(received), \(complete ? "whole" : "cut"))"
        }
    }

    /// One connection the listener accepted.
    struct Connection: Decodable, Sendable {
        var requests: [Received]
        /// Bytes after the last request that made no request head.
        var after: Int
        /// Whether the client closed it.
        var closed: Bool
    }

    struct State: Decodable, Sendable {
        var connections: [Connection]
        var held: Bool
    }

    var url: String { "http://127.0.0.1:\(port)" }

    /// A new listener; with `hold`, it reads no body until ``release()``.
    static func open(_ context: ConformanceContext, hold: Bool = false) async throws -> UploadListener {
        struct Opened: Decodable { var port: Int }
        let control = context.executor()
        var request = context.hostile() |> path("upload-bounds", "open")
        if hold { request = request |> query("hold", 1) }
        let opened = try await control.send(request |> decode(Opened.self))
        return UploadListener(port: opened.port, context: context, control: control)
    }

    /// Lets a held listener read.
    func release() async throws {
        _ = try await control.send(context.hostile() |> path("upload-bounds", "release") |> query("port", port))
    }

    /// What it has received so far (connections the client made before asking included).
    func state() async throws -> State {
        try await control.send(context.hostile() |> path("upload-bounds", "state") |> query("port", port) |> decode(State.self))
    }

    /// What it received, once the client is done with every connection: closed it, or (a request
    /// sent whole, as announced) left it idle after its answer. A request the client cut short
    /// on a connection it keeps is never done: a connection still in that state a minute after
    /// the call failed fails the case (a close takes microseconds on loopback).
    func settled(line: Int = #line) async throws -> State {
        let clock = ContinuousClock()
        let start = clock.now
        while true {
            let state = try await state()
            if state.connections.allSatisfy({ $0.closed || $0.requests.allSatisfy(\.complete) }) {
                _ = try? await control.send(context.hostile() |> path("upload-bounds", "close") |> query("port", port))
                return state
            }
            if clock.now - start > .seconds(60) {
                throw context.failure(
                    "a connection is still open a minute after its body broke its length (the transport kept it): \(state.connections.map(\.requests))",
                    line: line)
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}

extension ConformanceContext {
    /// Fails the case unless `error` is an invalid request whose framing problem says `words`.
    func expectFraming(_ error: CourierError, saying words: String, _ what: String, line: Int = #line) throws(ConformanceFailure) {
        guard case .invalidRequest(let problems) = error.cause,
            let problem = problems.first(where: { $0.kind == .invalidFraming }), problem.message.contains(words)
        else { throw failure("\(what): expected an invalid request whose framing problem says \"\(words)\", got \(error)", line: line) }
    }

    /// Fails the case unless every connection carried at most one request, which received no
    /// more than `declared` bytes and had nothing after it.
    func expectNothingPast(_ state: UploadListener.State, declared: Int, _ what: String, line: Int = #line) throws(ConformanceFailure) {
        for connection in state.connections {
            try expect(connection.requests.count <= 1, "\(what): a connection carried \(connection.requests)", line: line)
            try expect(connection.after == 0, "\(what): \(connection.after) bytes followed the request", line: line)
            for request in connection.requests {
                try expect(request.received <= declared, "\(what): the server received \(request)", line: line)
            }
        }
    }

    /// ``expectNothingPast(_:declared:_:line:)``, and no request arrived whole: the server never
    /// answered a body that broke its length.
    func expectNeverWhole(_ state: UploadListener.State, declared: Int, _ what: String, line: Int = #line) throws(ConformanceFailure) {
        try expectNothingPast(state, declared: declared, what, line: line)
        for request in state.connections.flatMap(\.requests) {
            try expect(!request.complete, "\(what): the server received the request whole: \(request)", line: line)
        }
    }
}
