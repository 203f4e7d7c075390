import Courier
import CourierNIO
import Foundation
import Testing

/// WebSocket over CourierNIO against a peer on SwiftNIO: hummingbird-websocket's echo server
/// (`COURIER_WEBSOCKET_HUMMINGBIRD_URL`, Benchmarks/WebSocket's `WebSocketEchoServer`, which
/// `scripts/test` builds and starts), with permessage-deflate by compress-nio's zlib, its server
/// context taken over between messages unless asked not to.
@Suite("NIOExecutor: WebSocket against hummingbird-websocket", .serialized, .timeLimit(.minutes(2)))
struct WebSocketHummingbirdTests {
    let executor = makeExecutor()

    static var noise: Data {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<(256 << 10)).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    static let lines = String((0..<20_000).map { "{\"id\":\($0),\"name\":\"user \($0 % 97)\"}\n" }.joined())

    func open(_ options: WebSocketOptions = WebSocketOptions()) async throws -> WebSocket {
        try await executor.webSocket(
            .get |> url(try WebSocketTests.address("COURIER_WEBSOCKET_HUMMINGBIRD_URL") + "/") |> timeout(10), options: options)
    }

    /// Sends each message and expects it back as it went.
    func echo(_ messages: [WebSocketMessage], on socket: WebSocket) async throws {
        var replies = socket.messages.makeAsyncIterator()
        for message in messages {
            try await socket.send(message)
            #expect(try await replies.next() == message)
        }
    }

    @Test("an echo without compression: text (not only ASCII), 1 MiB binary, empty, 200 in a row, a ping; the client closes cleanly")
    func plainEcho() async throws {
        let socket = try await open()
        #expect(socket.compression == nil)
        var messages: [WebSocketMessage] = [.text("héllo ☃ 𝄞"), .binary(Data(count: 1 << 20)), .binary(Self.noise), .text(""), .binary(Data())]
        messages += (0..<200).map { .text("message \($0)") }
        try await echo(messages, on: socket)
        try await socket.ping()
        try await socket.close()
        let closed = try await socket.closed
        #expect(closed.initiator == .client)
        #expect(closed.code == .normalClosure)
    }

    @Test("compressed both ways: both contexts kept over 300 messages, or neither when asked; large, small, incompressible")
    func compressedEcho() async throws {
        // Both ends taking the context over (each compressed message refers back to the ones
        // before it), then both compressing each message on its own.
        for noTakeover in [false, true] {
            var options = WebSocketOptions()
            options.compression = WebSocketCompression(minimumSize: 64, serverNoContextTakeover: noTakeover, clientNoContextTakeover: noTakeover)
            let socket = try await open(options)
            let negotiated = try #require(socket.compression)
            #expect(negotiated.serverNoContextTakeover == noTakeover)
            #expect(negotiated.clientNoContextTakeover == noTakeover)
            var messages: [WebSocketMessage] = [.text(Self.lines), .binary(Self.noise), .text("tiny"), .binary(Data(count: 1 << 20))]
            messages += (0..<300).map { .text("{\"sequence\":\($0),\"payload\":\"\(String(repeating: "abc", count: 40))\"}") }
            try await echo(messages, on: socket)
            try await socket.close()
            #expect(try await socket.closed.code == .normalClosure)
        }
    }

    @Test("an echo past the message limit fails with 1009, the server told so; compressed, the inflated size counts")
    func limit() async throws {
        for compressed in [false, true] {
            var options = WebSocketOptions(maximumMessageSize: 1 << 20)
            if compressed { options.compression = .permessageDeflate }
            let socket = try await open(options)
            #expect((socket.compression != nil) == compressed)
            try await socket.send(.binary(Data(count: (1 << 20) + 1)))
            let error = await #expect(throws: CourierError.self) { for try await _ in socket.messages {} }
            let failure = try #require(WebSocketTests.failure(error))
            #expect(failure.kind == .messageTooLarge)
            #expect(failure.closeCode == .messageTooBig)
        }
    }
}
