import Courier
import Foundation
import Testing

/// A socket whose messages go to a handler (``Executor/webSocket(_:options:clock:onMessage:)``)
/// and sends that do not wait (``WebSocket/enqueue(_:)``): the same rules as the reader's socket,
/// on both read paths, plus the queue's order and limit.
@Suite("WebSocket message handler and enqueue", .timeLimit(.minutes(2)))
struct WebSocketHandlerTests {
    typealias Path = WebSocketReadPathTests.Path
    static let chat = Request.get |> url("wss://chat.test/live")

    /// The `index`th message of the echo's burst: text and binary in turn.
    static func burst(_ index: Int) -> WebSocketMessage {
        if index % 2 == 0 { return .text("n \(index)") }
        return .binary(Data([UInt8(index % 256)]))
    }

    /// The handler's answer to `message`.
    static func answer(_ message: WebSocketMessage) -> WebSocketMessage {
        switch message {
        case .text(let text): .text("re: " + text)
        case .binary(let data): .binary(data + data)
        }
    }

    static func failure(_ error: CourierError?) -> WebSocketFailure.Kind? {
        if case .webSocket(let failure)? = error?.cause { return failure.kind }
        return nil
    }

    @Test("every message reaches the handler in order, each answered from it with enqueue; messages hands out none", arguments: Path.allCases)
    func echoFromTheHandler(path: Path) async throws {
        let replies = Locked<[WebSocketMessage]>([])
        let (executor, _) = WebSocketReadPathTests.server(path) { peer in
            // A burst: several messages to a chunk, and replies written while more arrive.
            for index in 0..<300 { try await peer.send(Self.burst(index)) }
            for _ in 0..<300 {
                guard let reply = try await peer.receiveMessage() else { return }
                replies.withLock { $0.append(reply) }
            }
            try await peer.close(.normalClosure, reason: "enough")
            while try await peer.receiveFrame() != nil {}
        }
        let received = Locked<[WebSocketMessage]>([])
        let socket = try await executor.webSocket(Self.chat) { socket, message in
            received.withLock { $0.append(message) }
            do {
                try socket.enqueue(Self.answer(message))
            } catch {
                Issue.record("enqueue failed: \(error)")
            }
        }
        for try await message in socket.messages { Issue.record("the sequence handed out \(message)") }
        #expect(try await socket.closed == WebSocketClose(initiator: .server, code: .normalClosure, reason: "enough"))
        let expected = (0..<300).map(Self.burst)
        #expect(received.withLock { $0 } == expected)
        #expect(replies.withLock { $0 } == expected.map(Self.answer))
    }

    @Test("a ping between messages is answered; the handler gets the messages around it, and none after its own close", arguments: Path.allCases)
    func pingAndClose(path: Path) async throws {
        let frames = Locked<[WebSocketPeer.Frame]>([])
        let (executor, _) = WebSocketReadPathTests.server(path) { peer in
            try await peer.send(.text("before"))
            try await peer.send(frame: 0x9, payload: Data("are you there".utf8))
            try await peer.send(.text("after"))
            while let frame = try await peer.receiveFrame() {
                frames.withLock { $0.append(frame) }
                if frame.opcode == 0x8 {
                    // The client closed: a message sent now is not handed out.
                    try await peer.send(.text("too late"))
                    try await peer.close()
                    break
                }
            }
        }
        let received = Locked<[WebSocketMessage]>([])
        let socket = try await executor.webSocket(Self.chat) { _, message in received.withLock { $0.append(message) } }
        _ = try await waitFor { received.withLock { $0.count == 2 ? true : nil } }
        try await socket.close(.normalClosure, reason: "done")
        #expect(try await socket.closed == WebSocketClose(initiator: .client, code: .normalClosure, reason: "done"))
        #expect(received.withLock { $0 } == [.text("before"), .text("after")])
        let sent = frames.withLock { $0 }
        #expect(sent.map(\.opcode) == [0xA, 0x8])
        #expect(sent.first?.payload == Data("are you there".utf8))
    }

    @Test(
        "sends that cannot go at once queue in order, behind them an awaited send; past the limit a typed error, nothing queued, the socket open",
        arguments: [(1_024, 8 << 10), (16, 64 << 10)])
    func queueOrderAndLimit(size: Int, limit: Int) async throws {
        let (start, go) = AsyncStream.makeStream(of: Void.self)
        let arrived = Locked<[WebSocketMessage]>([])
        let executor = WebSocketTests.server { peer in
            // Not read until the client has filled the connection and its queue.
            for await _ in start { break }
            while let message = try await peer.receiveMessage() {
                arrived.withLock { $0.append(message) }
                if message == .text("last") { break }
            }
            try await peer.close()
            while try await peer.receiveFrame() != nil {}
        }
        var options = WebSocketOptions()
        options.maximumQueuedBytes = limit
        let socket = try await executor.webSocket(Self.chat, options: options)
        var accepted = 0
        var refusal: CourierError?
        // Thousands of small messages queue at once with the second pair: the line of turns
        // lets go of its front as it goes.
        for index in 0..<1_000_000 {
            var payload = Data(count: size)
            payload[0] = UInt8(truncatingIfNeeded: index >> 16)
            payload[1] = UInt8(truncatingIfNeeded: index >> 8)
            payload[2] = UInt8(truncatingIfNeeded: index)
            do {
                try socket.enqueue(.binary(payload))
                accepted += 1
            } catch {
                refusal = error
                break
            }
        }
        let error = try #require(refusal, "a million messages went without the queue filling")
        #expect(Self.failure(error) == .sendQueueFull)
        #expect(error.description.contains("\(limit)"))
        // Still open: an awaited send joins the line behind what is queued.
        let last = Task { try await socket.send(.text("last")) }
        go.yield()
        try await last.value
        #expect(try await socket.closed.initiator == .server)
        let messages = arrived.withLock { $0 }
        #expect(messages.count == accepted + 1)
        #expect(messages.last == .text("last"))
        let order = messages.dropLast().map { message -> Int in
            guard case .binary(let data) = message, data.count == size else { return -1 }
            return Int(data[0]) << 16 | Int(data[1]) << 8 | Int(data[2])
        }
        #expect(order == Array(0..<accepted))
    }

    @Test("enqueue once the socket closes or fails is a typed error; a negative queue limit counts as zero")
    func enqueueAfterTheEnd() async throws {
        let executor = WebSocketTests.server { peer in
            // Answers the close.
            while try await peer.receiveMessage() != nil {}
        }
        let socket = try await executor.webSocket(Self.chat)
        try socket.enqueue(.text("fine"))
        async let closing: Void = socket.close()
        // The close frame is queued or sent: nothing may follow it.
        _ = try await waitFor { () -> Bool? in
            do throws(CourierError) {
                try socket.enqueue(.text("probe"))
                return nil
            } catch {
                return Self.failure(error) == .closed ? true : nil
            }
        }
        try? await closing
        var options = WebSocketOptions()
        options.maximumQueuedBytes = -5
        #expect(options.maximumQueuedBytes == 0)

        let lost = WebSocketTests.server { peer in await peer.drop() }
        let failed = try await lost.webSocket(Self.chat) { _, _ in }
        _ = try? await failed.closed
        let error = #expect(throws: CourierError.self) { try failed.enqueue(.text("late")) }
        #expect(Self.failure(error) == .connectionLost)
    }

    @Test("the handler does not keep its socket: dropped unclosed, the socket ends and lets the connection go", arguments: Path.allCases)
    func droppedSocket(path: Path) async throws {
        let ended = Locked(false)
        let received = Locked(0)
        let (executor, _) = WebSocketReadPathTests.server(path) { peer in
            try await peer.send(.text("hello"))
            while try await peer.receiveFrame() != nil {}
            ended.withLock { $0 = true }
        }
        do {
            let socket = try await executor.webSocket(Self.chat) { socket, _ in
                received.withLock { $0 += 1 }
                try? socket.enqueue(.text("thanks"))
            }
            _ = try await waitFor { received.withLock { $0 == 1 ? true : nil } }
            _ = socket
        }
        _ = try await waitFor { ended.withLock { $0 } ? true : nil }
    }
}
