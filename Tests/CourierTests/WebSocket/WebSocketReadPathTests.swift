import Courier
import Foundation
import Testing

/// The two ways a socket's bytes reach its frames, held to the same rules: delivered where the
/// transport hands them over (the stream's sink, the usual way), and read by a task (a stream a
/// middleware observes, whose observer must see each chunk a reader takes).
@Suite("WebSocket read paths: delivered and read by a task", .timeLimit(.minutes(2)))
struct WebSocketReadPathTests {
    enum Path: String, CaseIterable, CustomTestStringConvertible {
        case delivered, observed
        var testDescription: String { rawValue }
    }

    /// The in-memory server, and for `.observed` the count of bytes a hop middleware saw go by.
    static func server(_ path: Path, _ script: @escaping @Sendable (WebSocketPeer) async throws -> Void) -> (any Executor, Locked<Int>) {
        let seen = Locked(0)
        let executor = InMemoryExecutor(routes: [.init(.get, "/live", .webSocket(script))])
        switch path {
        case .delivered: return (executor, seen)
        case .observed: return (executor.eachHop(CountBody(seen: seen)), seen)
        }
    }

    static let chat = Request.get |> url("wss://chat.test/live")

    @Test("an echo of many messages both ways, then a clean close", arguments: Path.allCases)
    func echo(path: Path) async throws {
        let (executor, seen) = Self.server(path) { peer in
            while let message = try await peer.receiveMessage() { try await peer.send(message) }
        }
        let socket = try await executor.webSocket(Self.chat)
        var messages = socket.messages.makeAsyncIterator()
        for index in 0..<200 {
            try await socket.send(.text("message \(index)"))
            #expect(try await messages.next() == .text("message \(index)"))
        }
        try await socket.close(.normalClosure, reason: "done")
        #expect(try await socket.closed.initiator == .client)
        #expect((seen.withLock { $0 } > 0) == (path == .observed))
    }

    @Test("a slow reader holds the peer back; every message arrives in order", arguments: Path.allCases)
    func backpressure(path: Path) async throws {
        let written = Locked(0)
        let (executor, _) = Self.server(path) { peer in
            for index in 0..<2_000 {
                try await peer.send(.binary(Data(repeating: UInt8(truncatingIfNeeded: index), count: 1_024)))
                written.withLock { $0 += 1 }
            }
            try await peer.close()
        }
        var options = WebSocketOptions()
        options.bufferedMessages = 2
        let socket = try await executor.webSocket(Self.chat, options: options)
        var messages = socket.messages.makeAsyncIterator()
        _ = try await messages.next()
        let last = await settled(written)
        // 2 messages in the socket's buffer, 256 KiB in the byte stream's, a few in flight.
        #expect(last <= 2 + 256 + 8)
        var count = 1
        while let message = try await messages.next() {
            #expect(message == .binary(Data(repeating: UInt8(truncatingIfNeeded: count), count: 1_024)))
            count += 1
        }
        #expect(count == 2_000)
    }

    @Test("a ping between messages is answered before the close that follows it; messages around it arrive", arguments: Path.allCases)
    func pingThenClose(path: Path) async throws {
        let frames = Locked<[WebSocketPeer.Frame]>([])
        let (executor, _) = Self.server(path) { peer in
            try await peer.send(.text("before"))
            try await peer.send(frame: 0x9, payload: Data("are you there".utf8))
            try await peer.send(.text("after"))
            try await peer.close(.goingAway, reason: "bye")
            while let frame = try await peer.receiveFrame() {
                frames.withLock { $0.append(frame) }
                if frame.opcode == 0x8 { break }
            }
        }
        let socket = try await executor.webSocket(Self.chat)
        var received: [WebSocketMessage] = []
        for try await message in socket.messages { received.append(message) }
        #expect(received == [.text("before"), .text("after")])
        #expect(try await socket.closed == WebSocketClose(initiator: .server, code: .goingAway, reason: "bye"))
        let sent = try await waitFor { () -> [WebSocketPeer.Frame]? in
            let frames = frames.withLock { $0 }
            return frames.last?.opcode == 0x8 ? frames : nil
        }
        #expect(sent.map(\.opcode) == [0xA, 0x8])
        #expect(sent.first?.payload == Data("are you there".utf8))
    }

    @Test("a frame that breaks the rules after good ones: the good ones arrive, then a typed error and the close code", arguments: Path.allCases)
    func violationAfterMessages(path: Path) async throws {
        let reply = Locked<WebSocketPeer.Frame?>(nil)
        let (executor, _) = Self.server(path) { peer in
            try await peer.send(.text("fine"))
            try await peer.send(frame: 0x3, payload: Data())  // a reserved opcode
            let frame = try await peer.receiveFrame()
            reply.withLock { $0 = frame }
        }
        let socket = try await executor.webSocket(Self.chat)
        var received: [WebSocketMessage] = []
        let error = await #expect(throws: CourierError.self) {
            for try await message in socket.messages { received.append(message) }
        }
        #expect(received == [.text("fine")])
        if case .webSocket(let failure)? = error?.cause { #expect(failure.closeCode == .protocolError) } else { Issue.record("not a WebSocket failure: \(String(describing: error))") }
        let sent = try await waitFor { reply.withLock { $0 } }
        #expect(sent.closeCode == .protocolError)
    }

    @Test("the connection ends without a close frame: what came arrives, then connectionLost", arguments: Path.allCases)
    func droppedConnection(path: Path) async throws {
        let (executor, _) = Self.server(path) { peer in
            try await peer.send(.text("one"))
            try await peer.send(.text("two"))
            await peer.drop()
        }
        let socket = try await executor.webSocket(Self.chat)
        var received: [WebSocketMessage] = []
        let error = await #expect(throws: CourierError.self) {
            for try await message in socket.messages { received.append(message) }
        }
        #expect(received == [.text("one"), .text("two")])
        if case .webSocket(let failure)? = error?.cause { #expect(failure.kind == .connectionLost) } else { Issue.record("not a WebSocket failure") }
    }

    @Test("a socket dropped unclosed stops reading and lets the connection go", arguments: Path.allCases)
    func droppedSocket(path: Path) async throws {
        let ended = Locked(false)
        let (executor, _) = Self.server(path) { peer in
            try await peer.send(.text("hello"))
            while try await peer.receiveFrame() != nil {}
            ended.withLock { $0 = true }
        }
        do {
            let socket = try await executor.webSocket(Self.chat)
            var messages = socket.messages.makeAsyncIterator()
            #expect(try await messages.next() == .text("hello"))
        }
        _ = try await waitFor { ended.withLock { $0 } ? true : nil }
    }
}

/// Counts the bytes of each hop's body as its reader takes them (an observer, as a logger is).
private struct CountBody: Middleware {
    let seen: Locked<Int>
    func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
        var response = try await next(request)
        response.body = response.body.observing(chunk: { [seen] chunk in seen.withLock { $0 += chunk.count } }, end: { _ in })
        return response
    }
}
