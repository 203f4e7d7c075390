import Courier
import CourierNIO
import Foundation
import Testing

/// permessage-deflate (RFC 7692) over CourierNIO against Python's `websockets` with zlib
/// (`COURIER_WEBSOCKET_DEFLATE_URL`, which `scripts/test` starts): its defaults are windows of 12
/// bits both ways and the server's context taken over between messages (and, in the echo, this
/// end's, as asked), so this holds Courier's inflater
/// to zlib's output and zlib to what Courier's deflater writes within a window of 4 KiB, each
/// message referring back to the ones before it.
@Suite("NIOExecutor: WebSocket compression", .serialized, .timeLimit(.minutes(2)))
struct WebSocketCompressionTests {
    let executor = makeExecutor()

    static func options(serverNoContextTakeover: Bool = false, clientNoContextTakeover: Bool = true, limit: Int = 16 << 20) -> WebSocketOptions {
        var options = WebSocketOptions(maximumMessageSize: limit)
        options.compression = WebSocketCompression(
            minimumSize: 64, serverNoContextTakeover: serverNoContextTakeover, clientNoContextTakeover: clientNoContextTakeover)
        return options
    }

    static func open(_ executor: NIOExecutor, _ path: String, _ options: WebSocketOptions) async throws -> WebSocket {
        try await executor.webSocket(
            .get |> url(try WebSocketTests.address("COURIER_WEBSOCKET_DEFLATE_URL") + path) |> timeout(10), options: options)
    }

    @Test("an echo compressed both ways: large and small, text and binary, compressible or not; the windows as the server set them")
    func echo() async throws {
        let socket = try await Self.open(executor, "/echo", Self.options(clientNoContextTakeover: false))
        let negotiated = try #require(socket.compression)
        #expect(negotiated.clientMaxWindowBits == 12)
        #expect(negotiated.serverMaxWindowBits == 12)
        #expect(!negotiated.serverNoContextTakeover)
        #expect(!negotiated.clientNoContextTakeover)
        var generator = SystemRandomNumberGenerator()
        let noise = Data((0..<(256 << 10)).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let lines = String((0..<20_000).map { "{\"id\":\($0),\"name\":\"user \($0 % 97)\"}\n" }.joined())
        let messages: [WebSocketMessage] = [
            .text("hello ☃"), .text(lines), .binary(noise), .binary(Data(count: 1 << 20)), .text(""), .text(lines), .binary(Data([1])),
        ] + (0..<50).map { .text("{\"sequence\":\($0),\"symbol\":\"COUR\",\"venue\":\"loopback\",\"side\":\"buy\",\"quantity\":100}") }
        var iterator = socket.messages.makeAsyncIterator()
        for message in messages {
            try await socket.send(message)
            #expect(try await iterator.next() == message)
        }
        try await socket.close()
        #expect(try await socket.closed.initiator == .client)
    }

    @Test("a message handler, each context taken over: echoes in order, a large compressed one inflated off the loop and handed over there")
    func handlerEcho() async throws {
        let (echoes, feed) = AsyncStream.makeStream(of: WebSocketMessage.self)
        let socket = try await executor.webSocket(
            .get |> url(try WebSocketTests.address("COURIER_WEBSOCKET_DEFLATE_URL") + "/echo") |> timeout(10),
            options: Self.options(clientNoContextTakeover: false)
        ) { _, message in feed.yield(message) }
        #expect(socket.compression?.clientNoContextTakeover == false)
        // 600 KB of JSON lines: compressed past 64 KiB, so the echo is inflated off the loop.
        let lines = String((0..<20_000).map { "{\"id\":\($0),\"name\":\"user \($0 % 97)\"}\n" }.joined())
        let sent: [WebSocketMessage] = [.text("first"), .text(lines), .binary(Data(count: 100_000))]
            + (0..<100).map { .text("{\"sequence\":\($0),\"symbol\":\"COUR\",\"side\":\"buy\",\"quantity\":100}") } + [.text(lines)]
        for message in sent { try socket.enqueue(message) }
        var received: [WebSocketMessage] = []
        for await message in echoes {
            received.append(message)
            if received.count == sent.count { break }
        }
        #expect(received == sent)
        try await socket.close()
        #expect(try await socket.closed.initiator == .client)
    }

    @Test("the server's context taken over across 300 messages, and a server asked to take none over")
    func contextTakeover() async throws {
        for asked in [false, true] {
            let socket = try await Self.open(executor, "/flood?count=300&size=3000", Self.options(serverNoContextTakeover: asked))
            #expect(socket.compression?.serverNoContextTakeover == asked)
            var count = 0
            for try await message in socket.messages {
                #expect(message == .binary(Data(count: 3000)))
                count += 1
            }
            #expect(count == 300)
            #expect(try await socket.closed.code == .normalClosure)
        }
    }

    @Test("a deflate bomb (64 MiB of zeros in some 64 KiB) fails at the limit with 1009, the server told so")
    func bomb() async throws {
        let socket = try await Self.open(executor, "/flood?count=1&size=67108864", Self.options(limit: 1 << 20))
        let error = await #expect(throws: CourierError.self) { for try await _ in socket.messages {} }
        let failure = try #require(WebSocketTests.failure(error))
        #expect(failure.kind == .messageTooLarge)
        #expect(failure.closeCode == .messageTooBig)
    }
}
