import Courier
import Foundation
import Testing

/// A WebSocket over the in-memory executor: the handshake through the exchange, the connection's
/// rules each way, the one outcome. The peer is scripted (``Stub/webSocket(subprotocol:headers:compression:_:)``).
@Suite("WebSocket over the in-memory executor", .timeLimit(.minutes(2)))
struct WebSocketTests {
    static let chat = Request.get |> url("wss://chat.test/live")

    static func server(subprotocol: String? = nil, _ script: @escaping @Sendable (WebSocketPeer) async throws -> Void) -> InMemoryExecutor {
        InMemoryExecutor(routes: [.init(.get, "/live", .webSocket(subprotocol: subprotocol, script))])
    }

    static func failure(_ error: CourierError) -> WebSocketFailure? {
        if case .webSocket(let failure) = error.cause { return failure }
        return nil
    }

    @Test("an echo: messages both ways, then the client closes and the server answers")
    func echo() async throws {
        let executor = Self.server { peer in
            while let message = try await peer.receiveMessage() { try await peer.send(message) }
        }
        let socket = try await executor.webSocket(Self.chat)
        #expect(socket.response.status == 101)
        try await socket.send(.text("hello"))
        try await socket.send(.binary(Data([0, 1, 2])))
        try await socket.send(json: ["n": 1])
        var messages = socket.messages.makeAsyncIterator()
        #expect(try await messages.next() == .text("hello"))
        #expect(try await messages.next() == .binary(Data([0, 1, 2])))
        #expect(try await messages.next()?.decode([String: Int].self) == ["n": 1])
        try await socket.close(.normalClosure, reason: "done")
        #expect(try await socket.closed == WebSocketClose(initiator: .client, code: .normalClosure, reason: "done"))
        #expect(try await messages.next() == nil)
        // Nothing more goes out after the close.
        await #expect(throws: CourierError.self) { try await socket.send(.text("late")) }
    }

    @Test("the handshake goes through the exchange: the hop middleware sees the request and the 101; the URL is https")
    func handshakeThroughMiddleware() async throws {
        let seen = Locked<[(Request, Int)]>([])
        let executor = Self.server { peer in try await peer.close() }
            .eachHop(Observe { request, status in seen.withLock { $0.append((request, status)) } })
        let socket = try await executor.webSocket(Self.chat |> bearer("s3cr3t-token"))
        _ = try await socket.closed
        let hops = seen.withLock { $0 }
        #expect(hops.count == 1)
        #expect(hops.first?.1 == 101)
        #expect(hops.first?.0.baseURL?.scheme == "https")
        #expect(hops.first?.0.headers["Sec-WebSocket-Key"] != nil)
        #expect(executor.requests.first?.headers[.authorization] == "Bearer s3cr3t-token")
    }

    @Test("the server closes first: the client answers with the same code, messages end, the outcome says so")
    func serverCloses() async throws {
        let answer = Locked<WebSocketPeer.Frame?>(nil)
        let executor = Self.server { peer in
            try await peer.send(.text("bye"))
            try await peer.close(.goingAway, reason: "restart")
            answer.withLock { _ in }
            let frame = try await peer.receiveFrame()
            answer.withLock { $0 = frame }
        }
        let socket = try await executor.webSocket(Self.chat)
        var received: [WebSocketMessage] = []
        for try await message in socket.messages { received.append(message) }
        #expect(received == [.text("bye")])
        #expect(try await socket.closed == WebSocketClose(initiator: .server, code: .goingAway, reason: "restart"))
        // The reply went out before the connection closed.
        let closeFrame = try await waitFor { answer.withLock { $0 } }
        #expect(closeFrame.opcode == 0x8)
        #expect(closeFrame.closeCode == .goingAway)
    }

    @Test("a ping from the server is answered with its payload; a pong to the client's ping ends its wait")
    func pings() async throws {
        let pong = Locked<WebSocketPeer.Frame?>(nil)
        let executor = Self.server { peer in
            try await peer.send(frame: 0x9, payload: Data("are you there".utf8))
            let frame = try await peer.receiveFrame()
            pong.withLock { $0 = frame }
            // Answer the client's ping, then echo until it closes.
            while let message = try await peer.receiveMessage() { try await peer.send(message) }
        }
        let socket = try await executor.webSocket(Self.chat)
        let answered = try await waitFor { pong.withLock { $0 } }
        #expect(answered.opcode == 0xA)
        #expect(answered.payload == Data("are you there".utf8))
        try await socket.ping()
        try await socket.close()
        #expect(try await socket.closed.initiator == .client)
    }

    @Test("a peer that breaks the protocol: the client closes with its code and fails with a typed error", arguments: [
        (0x83 as UInt8, Data(), WebSocketFailure.Kind.protocolError, WebSocketCloseCode.protocolError),
        (0xC1, Data("x".utf8), .protocolError, .protocolError),
        (0x81, Data([0xC0, 0xAF]), .invalidUTF8, .invalidPayload),
        (0x80, Data([1]), .protocolError, .protocolError),
        (0x88, Data([0x03]), .protocolError, .protocolError),
    ])
    func protocolViolations(first: UInt8, payload: Data, kind: WebSocketFailure.Kind, code: WebSocketCloseCode) async throws {
        let reply = Locked<WebSocketPeer.Frame?>(nil)
        let executor = Self.server { peer in
            try await peer.send(frame: first & 0x0F, payload: payload, isFinal: first & 0x80 != 0, reservedBits: (first >> 4) & 0x7)
            let frame = try await peer.receiveFrame()
            reply.withLock { $0 = frame }
        }
        let socket = try await executor.webSocket(Self.chat)
        let error = await #expect(throws: CourierError.self) { for try await _ in socket.messages {} }
        let failure = try #require(error.flatMap(Self.failure))
        #expect(failure.kind == kind)
        #expect(failure.closeCode == code)
        let sent = try await waitFor { reply.withLock { $0 } }
        #expect(sent.closeCode == code)
        await #expect(throws: CourierError.self) { try await socket.closed }
    }

    @Test("a message over the limit closes with 1009 before it is kept")
    func messageTooLarge() async throws {
        let executor = Self.server { peer in
            try await peer.send(.binary(Data(count: 1_000)))
            _ = try await peer.receiveFrame()
        }
        var options = WebSocketOptions()
        options.maximumMessageSize = 999
        let socket = try await executor.webSocket(Self.chat, options: options)
        let error = await #expect(throws: CourierError.self) { for try await _ in socket.messages {} }
        #expect(error.flatMap(Self.failure)?.kind == .messageTooLarge)
    }

    @Test("the connection ends without a close frame: connectionLost, transient")
    func connectionLost() async throws {
        let executor = Self.server { peer in
            try await peer.send(.text("one"))
            await peer.drop()
        }
        let socket = try await executor.webSocket(Self.chat)
        var received: [WebSocketMessage] = []
        let error = await #expect(throws: CourierError.self) {
            for try await message in socket.messages { received.append(message) }
        }
        #expect(received == [.text("one")])
        #expect(error.flatMap(Self.failure)?.kind == .connectionLost)
        #expect(error?.isTransient == true)
    }

    @Test("a refused upgrade is a typed error with the status, headers and the start of the body; secrets stay out")
    func refused() async throws {
        let executor = InMemoryExecutor(routes: [
            .init(.get, "/live", .status(403, headers: [.contentType: "text/plain"], body: Data("token s3cr3t-token is not allowed".utf8)))
        ])
        let error = await #expect(throws: CourierError.self) {
            _ = try await executor.webSocket(Self.chat |> bearer("s3cr3t-token"))
        }
        let refused = try #require(error)
        #expect(Self.failure(refused)?.kind == .upgradeRefused)
        #expect(refused.status == 403)
        #expect(refused.response?.body == Data("token s3cr3t-token is not allowed".utf8))
        #expect(!refused.description.contains("s3cr3t-token"))
        #expect(!"\(refused)".contains("s3cr3t-token"))
        #expect(refused.description.contains("403"))
    }

    @Test("a 101 with the wrong accept, or a subprotocol not offered, fails the handshake and closes the connection")
    func badHandshake() async throws {
        let wrongAccept = InMemoryExecutor(routes: [
            .init(.get, "/live", .switchingProtocols(.init(
                headers: { _ in ["Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Accept": "AAAA"] },
                peer: { _ in })))
        ])
        let error = await #expect(throws: CourierError.self) { _ = try await wrongAccept.webSocket(Self.chat) }
        #expect(error.flatMap(Self.failure)?.kind == .handshakeFailed)
        let unoffered = Self.server(subprotocol: "chat.v9") { _ in }
        let other = await #expect(throws: CourierError.self) {
            _ = try await unoffered.webSocket(Self.chat, options: WebSocketOptions(subprotocols: ["chat.v2"]))
        }
        #expect(other.flatMap(Self.failure)?.kind == .handshakeFailed)
        let chosen = Self.server(subprotocol: "chat.v2") { peer in try await peer.close() }
        #expect(try await chosen.webSocket(Self.chat, options: WebSocketOptions(subprotocols: ["chat.v1", "chat.v2"])).subprotocol == "chat.v2")
    }

    @Test("an invalid handshake request is never sent; a transport that cannot upgrade is a typed error, nothing sent")
    func notSent() async throws {
        let executor = Self.server { _ in }
        await #expect(throws: CourierError.self) { _ = try await executor.webSocket(.post |> url("wss://chat.test/live")) }
        await #expect(throws: CourierError.self) {
            _ = try await executor.webSocket(Self.chat, options: WebSocketOptions(subprotocols: ["bad token"]))
        }
        #expect(executor.requests.isEmpty)
        let plain = Exchange(transport: Canned())
        let error = await #expect(throws: CourierError.self) { _ = try await plain.webSocket(Self.chat) }
        #expect(error.flatMap(Self.failure)?.kind == .unsupportedTransport)
    }

    @Test("a 101 to a call that did not ask to switch is still a bad response")
    func unaskedSwitch() async throws {
        let executor = Self.server { _ in }
        let error = await #expect(throws: CourierError.self) { _ = try await executor.send(Self.chat |> url("https://chat.test/live")) }
        guard case .transport(let failure)? = error?.cause else {
            Issue.record("expected a transport failure")
            return
        }
        #expect(failure.kind == .badResponse)
    }

    @Test("close arguments are checked: a code that may not be sent, a reason over 123 bytes; nothing sent")
    func closeArguments() async throws {
        let executor = Self.server { peer in
            while let message = try await peer.receiveMessage() { try await peer.send(message) }
        }
        let socket = try await executor.webSocket(Self.chat)
        for code: UInt16 in [0, 999, 1005, 1006, 1015, 2999, 5000] {
            await #expect(throws: CourierError.self) { try await socket.close(WebSocketCloseCode(rawValue: code)) }
        }
        await #expect(throws: CourierError.self) { try await socket.close(reason: String(repeating: "é", count: 62)) }
        // Still open.
        try await socket.send(.text("still here"))
        var messages = socket.messages.makeAsyncIterator()
        #expect(try await messages.next() == .text("still here"))
        try await socket.close(reason: String(repeating: "a", count: 123))
        #expect(try await socket.closed.code == .normalClosure)
    }

    @Test("a slow reader slows the socket: the peer's writes wait, nothing buffers without bound")
    func backpressure() async throws {
        let written = Locked(0)
        let executor = Self.server { peer in
            for _ in 0..<10_000 {
                try await peer.send(.binary(Data(count: 1_024)))
                written.withLock { $0 += 1 }
            }
            try await peer.close()
        }
        var options = WebSocketOptions()
        options.bufferedMessages = 4
        let socket = try await executor.webSocket(Self.chat, options: options)
        // Read one message, then wait until the peer is stuck.
        var messages = socket.messages.makeAsyncIterator()
        _ = try await messages.next()
        let last = await settled(written)
        // 4 messages in the socket's buffer, 256 KiB in the byte stream's, a few in flight.
        #expect(last <= 4 + 256 + 8)
        var count = 1
        while try await messages.next() != nil { count += 1 }
        #expect(count == 10_000)
    }

    @Test("keep-alive pings: a peer that answers keeps the socket; one that does not fails it (pingTimedOut)")
    func keepAlive() async throws {
        let clock = ManualClock()
        let silent = Self.server { peer in
            // Reads frames but never answers a ping.
            while try await peer.receiveFrame() != nil {}
        }
        var options = WebSocketOptions(pingInterval: .seconds(20))
        options.pingTimeout = .seconds(5)
        let socket = try await silent.webSocket(Self.chat, options: options, clock: clock)
        try await clock.waitForSleepers(1, of: .webSocketPing)
        clock.advance(by: .seconds(20))
        // The ping went out; its pong wait sleeps now.
        try await clock.waitForSleepers(1, of: .webSocketPing)
        clock.advance(by: .seconds(5))
        let error = await #expect(throws: CourierError.self) { try await socket.closed }
        #expect(error.flatMap(Self.failure)?.kind == .pingTimedOut)
    }

    @Test("a peer that never answers the close frame: closeTimedOut after the close timeout")
    func closeTimeout() async throws {
        let clock = ManualClock()
        let deaf = Self.server { peer in
            while try await peer.receiveFrame() != nil {}
        }
        let socket = try await deaf.webSocket(Self.chat, clock: clock)
        async let closing: Void = socket.close()
        try await clock.waitForSleepers(1, of: .webSocketClose)
        clock.advance(by: .seconds(5))
        try await closing
        let error = await #expect(throws: CourierError.self) { try await socket.closed }
        #expect(error.flatMap(Self.failure)?.kind == .closeTimedOut)
    }

    @Test("cancelling the task that reads the socket ends it at once")
    func cancellation() async throws {
        let executor = Self.server { peer in
            while try await peer.receiveFrame() != nil {}
        }
        let socket = try await executor.webSocket(Self.chat)
        let reader = Task { for try await _ in socket.messages {} }
        reader.cancel()
        await #expect(throws: (any Error).self) { try await reader.value }
        let error = await #expect(throws: CourierError.self) { try await socket.closed }
        if case .cancelled? = error?.cause {} else { Issue.record("expected cancelled, got \(String(describing: error))") }
    }
}

/// A hop middleware that reports each hop's request and status.
private struct Observe: Middleware {
    let report: @Sendable (Request, Int) -> Void
    init(_ report: @escaping @Sendable (Request, Int) -> Void) { self.report = report }
    func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
        let response = try await next(request)
        report(request, response.status)
        return response
    }
}

/// A transport that cannot upgrade.
private struct Canned: Transport {
    func send(hop request: Request, options: StreamOptions) async throws -> StreamedResponse {
        StreamedResponse(status: 200, body: ByteStream(Data()))
    }
}

/// Polls `value` between yields until it is non-nil: waits for progress another task makes
/// (bounded by the work it needs, not by a guess at the time).
func waitFor<Value>(_ value: () -> Value?) async throws -> Value {
    while true {
        if let value = value() { return value }
        try Task.checkCancellation()
        await Task.yield()
    }
}

/// Waits until `count` (what a peer has written) stops moving over 200 yields, and returns it:
/// the peer is stuck behind the socket's backpressure.
func settled(_ count: Locked<Int>) async -> Int {
    var last = -1
    while true {
        let now = count.withLock { $0 }
        if now == last { return now }
        last = now
        for _ in 0..<200 { await Task.yield() }
    }
}

/// A keep-alive ping whose pong waits behind messages the caller has not read yet is not a dead
/// peer: its timeout runs only while the socket is read.
@Suite("WebSocket keep-alive with a slow reader", .timeLimit(.minutes(1)))
struct SlowReaderKeepAliveTests {
    @Test("a socket whose reader is behind is not failed for a pong that cannot arrive yet")
    func slowReaderIsNotADeadPeer() async throws {
        let clock = ManualClock()
        let executor = InMemoryExecutor(routes: [
            .init(.get, "/live", .webSocket { peer in
                // More than the socket and the byte stream buffer: the peer waits on the client.
                for _ in 0..<400 { try await peer.send(.binary(Data(count: 1_024))) }
                while try await peer.receiveMessage() != nil {}
            })
        ])
        var options = WebSocketOptions(pingInterval: .seconds(20))
        options.pingTimeout = .seconds(5)
        options.bufferedMessages = 1
        let socket = try await executor.webSocket(.get |> url("wss://chat.test/live"), options: options, clock: clock)
        // The keep-alive's interval, then its ping's pong wait, which times out while the reader
        // is held (nothing is read): the wait is armed again instead of failing the socket.
        try await clock.waitForSleepers(1, of: .webSocketPing)
        clock.advance(by: .seconds(20))
        try await clock.waitForSleepers(1, of: .webSocketPing)
        clock.advance(by: .seconds(5))
        try await clock.waitForSleepers(1, of: .webSocketPing)
        clock.advance(by: .seconds(5))
        try await clock.waitForSleepers(1, of: .webSocketPing)
        // Reading lets everything through: the pong arrives, nothing failed.
        var messages = socket.messages.makeAsyncIterator()
        for _ in 0..<400 { _ = try await messages.next() }
        try await socket.close()
        #expect(try await socket.closed.initiator == .client)
    }
}
