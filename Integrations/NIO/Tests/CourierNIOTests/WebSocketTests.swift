import Courier
import CourierNIO
import Foundation
import Testing

/// WebSocket over CourierNIO against real peers `scripts/test` starts: Python's `websockets`
/// (a conforming server), and a raw server that writes each frame a client must refuse and
/// reports what the client answered. Through a SOCKS5 proxy too.
@Suite("NIOExecutor: WebSocket", .serialized, .timeLimit(.minutes(2)))
struct WebSocketTests {
    static func address(_ name: String) throws -> String {
        try #require(ProcessInfo.processInfo.environment[name], "run the tests with scripts/test, which starts the WebSocket peers")
    }

    static func failure(_ error: CourierError?) -> WebSocketFailure? {
        if case .webSocket(let failure)? = error?.cause { return failure }
        return nil
    }

    let executor = makeExecutor()

    @Test func messagesGoBothWaysAndTheClientClosesCleanly() async throws {
        let socket = try await executor.webSocket(.get |> url(try Self.address("COURIER_WEBSOCKET_URL") + "/echo") |> timeout(10))
        #expect(socket.response.status == 101)
        let large = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0) })
        var messages = socket.messages.makeAsyncIterator()
        for message: WebSocketMessage in [.text("hello ☃"), .binary(Data([0, 255])), .binary(large), .text("")] {
            try await socket.send(message)
            #expect(try await messages.next() == message)
        }
        try await socket.ping()
        try await socket.close(.normalClosure, reason: "done")
        #expect(try await socket.closed == WebSocketClose(initiator: .client, code: .normalClosure, reason: "done"))
        #expect(try await messages.next() == nil)
    }

    @Test func theServerClosesWithACodeAndReason() async throws {
        let socket = try await executor.webSocket(.get |> url(try Self.address("COURIER_WEBSOCKET_URL") + "/close?code=4000&reason=bye"))
        for try await _ in socket.messages {}
        #expect(try await socket.closed == WebSocketClose(initiator: .server, code: WebSocketCloseCode(rawValue: 4000), reason: "bye"))
    }

    @Test func aSlowReaderGetsEveryMessageOfAFlood() async throws {
        var options = WebSocketOptions()
        options.bufferedMessages = 2
        let socket = try await executor.webSocket(
            .get |> url(try Self.address("COURIER_WEBSOCKET_URL") + "/flood?count=3000&size=4096"), options: options)
        var count = 0
        for try await message in socket.messages {
            #expect(message.data.count == 4096)
            count += 1
            if count % 500 == 0 { await Task.yield() }
        }
        #expect(count == 3000)
        #expect(try await socket.closed.code == .normalClosure)
    }

    @Test func theHandshakeCarriesTheCallsHeadersAndTheSubprotocol() async throws {
        let socket = try await executor.webSocket(
            .get |> url(try Self.address("COURIER_WEBSOCKET_URL") + "/headers") |> bearer("s3cr3t") |> header("X-Trace", "t-1"),
            options: WebSocketOptions(subprotocols: ["chat.v1", "chat.v2"]))
        var messages = socket.messages.makeAsyncIterator()
        let headers = try #require(try await messages.next()).decode([String: String].self)
        #expect(headers["Authorization"] == "Bearer s3cr3t")
        #expect(headers["X-Trace"] == "t-1")
        #expect(headers["Upgrade"] == "websocket")
        #expect(headers["Connection"] == "Upgrade")
        #expect(headers["Sec-WebSocket-Version"] == "13")
        #expect(headers["Accept-Encoding"] == nil)
        try await socket.close()
        let chat = try await executor.webSocket(
            .get |> url(try Self.address("COURIER_WEBSOCKET_URL") + "/chat"), options: WebSocketOptions(subprotocols: ["chat.v1", "chat.v2"]))
        #expect(chat.subprotocol == "chat.v2")
        try await chat.close()
    }

    @Test func aRefusedHandshakeIsATypedErrorWithTheResponse() async throws {
        let error = await #expect(throws: CourierError.self) {
            _ = try await executor.webSocket(.get |> url(try Self.address("COURIER_WEBSOCKET_URL") + "/refuse") |> bearer("s3cr3t"))
        }
        #expect(Self.failure(error)?.kind == .upgradeRefused)
        #expect(error?.status == 403)
        #expect(error?.response?.body == Data("no sockets for you".utf8))
        #expect(error?.description.contains("s3cr3t") == false)
    }

    /// Each frame a client must refuse, the failure it is, and the close code Courier sends.
    static let refused: [(String, WebSocketFailure.Kind, UInt16?)] = [
        ("masked", .protocolError, 1002), ("rsv1", .protocolError, 1002), ("rsv2", .protocolError, 1002),
        ("opcode3", .protocolError, 1002), ("opcode11", .protocolError, 1002), ("long-ping", .protocolError, 1002),
        ("fragmented-ping", .protocolError, 1002), ("lone-continuation", .protocolError, 1002),
        ("nested-message", .protocolError, 1002), ("bad-utf8", .invalidUTF8, 1007), ("bad-utf8-split", .invalidUTF8, 1007),
        ("bad-close-code", .protocolError, 1002), ("one-byte-close", .protocolError, 1002),
        ("bad-close-reason", .invalidUTF8, 1007), ("huge", .messageTooLarge, 1009),
    ]

    @Test(arguments: refused.indices)
    func aPeerThatBreaksTheRulesIsClosedWithTheRightCode(index: Int) async throws {
        let (name, kind, code) = Self.refused[index]
        let raw = try Self.address("COURIER_WEBSOCKET_RAW_URL")
        let socket = try await executor.webSocket(.get |> url(raw + "/raw/" + name))
        let error = await #expect(throws: CourierError.self, "\(name)") { for try await _ in socket.messages {} }
        #expect(Self.failure(error)?.kind == kind, "\(name)")
        let report = try await answers(name)
        #expect(report.last?.code == code, "\(name): \(report)")
        #expect(report.allSatisfy { $0.masked }, "\(name)")
    }

    @Test func fragmentsAroundAPingMakeOneMessageAndThePingIsAnswered() async throws {
        let socket = try await executor.webSocket(.get |> url(try Self.address("COURIER_WEBSOCKET_RAW_URL") + "/raw/fragments"))
        var messages = socket.messages.makeAsyncIterator()
        #expect(try await messages.next() == .text("Hello"))
        try await socket.close()
        let report = try await answers("fragments")
        #expect(report.first?.opcode == 10)
        #expect(report.first?.payload == Data("ping".utf8).map { String(format: "%02x", $0) }.joined())
        #expect(report.last?.code == 1000)
    }

    @Test func aServerCloseIsAnsweredWithItsCode() async throws {
        let socket = try await executor.webSocket(.get |> url(try Self.address("COURIER_WEBSOCKET_RAW_URL") + "/raw/server-close"))
        #expect(try await socket.closed == WebSocketClose(initiator: .server, code: WebSocketCloseCode(rawValue: 4001), reason: "bye"))
        #expect(try await answers("server-close").last?.code == 4001)
    }

    @Test func aSocketOpensThroughASOCKS5Proxy() async throws {
        let proxy = try NIOTransport.Proxy(url: try Self.address("COURIER_SOCKS_PROXY_URL"))
        let executor = try NIOExecutor(configuration: NIOTransport.Configuration(proxies: NIOTransport.Proxies(http: proxy, https: proxy)))
        let socket = try await executor.webSocket(.get |> url(try Self.address("COURIER_WEBSOCKET_URL") + "/echo"))
        try await socket.send(.text("through socks"))
        var messages = socket.messages.makeAsyncIterator()
        #expect(try await messages.next() == .text("through socks"))
        try await socket.close()
        await executor.transport.shutdown()
    }

    @Test func shuttingTheTransportDownClosesAnOpenSocket() async throws {
        let transport = try NIOTransport()
        let socket = try await NIOExecutor(transport: transport).webSocket(.get |> url(try Self.address("COURIER_WEBSOCKET_URL") + "/echo"))
        await transport.shutdown()
        let error = await #expect(throws: CourierError.self) { try await socket.closed }
        #expect(Self.failure(error)?.kind == .connectionLost)
    }

    struct Answer: Decodable, CustomStringConvertible {
        var opcode: Int
        var masked: Bool
        var payload: String
        var code: UInt16?
        var description: String { "opcode \(opcode)\(code.map { " code \($0)" } ?? "")" }
    }

    /// What the client sent the raw server after the case's frame, once it closed (the report
    /// is written when the client's close frame or the connection's end arrives).
    func answers(_ name: String) async throws -> [Answer] {
        let raw = try Self.address("COURIER_WEBSOCKET_RAW_URL").replacingOccurrences(of: "ws://", with: "http://")
        for _ in 0..<1_200 {
            let answers = try await executor.send(.get |> url(raw + "/report") |> query("case", name) |> decode([Answer]?.self))
            if let answers, answers.contains(where: { $0.opcode == 8 }) { return answers }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("the raw server saw no close frame for \(name)")
        return []
    }
}
