import CourierCore
import CourierWebSocket
import Foundation

extension ConformanceSuite {
    /// WebSocket: a transport that switches protocols (``UpgradesConnections``) opens sockets
    /// whose messages, pings and closing handshake hold against a real peer (Python's
    /// `websockets`, which `scripts/test` starts); one that does not says so and sends nothing.
    static let webSockets: [ConformanceCase] = [
        ConformanceCase("webSocket: the handshake goes through the hop middleware; messages, a ping and both closing handshakes hold; a refusal is typed")
        { context in
            let hops = HopLog()
            let executor = context.executor(ConformanceOptions(hopMiddleware: [hops]))
            guard executor.exchange.transport is any UpgradesConnections else {
                let refused = try await context.error { _ = try await executor.webSocket(.get |> url(context.servers.httpbin + "/get")) }
                guard case .webSocket(let failure) = refused.cause, failure.kind == .unsupportedTransport else {
                    throw context.failure("a transport that cannot upgrade failed with \(refused), not unsupportedTransport")
                }
                try context.expect(hops.entries.isEmpty, "a transport that cannot upgrade sent \(hops.entries)")
                return
            }
            guard let peer = context.servers.webSocket else {
                throw context.failure("\(ConformanceServers.webSocketEnvironmentName) is not set: run the tests with scripts/test")
            }
            let socket = try await executor.webSocket(.get |> url(peer + "/echo") |> bearer("WS-SECRET") |> timeout(30))
            try context.expect(hops.entries.map(\.status) == [101], "the hop middleware saw \(hops.entries)")
            try context.expect(hops.entries.first?.authorization == "Bearer WS-SECRET", "the handshake lost its credential")
            var messages = socket.messages.makeAsyncIterator()
            let large = Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
            for message: WebSocketMessage in [.text("héllo"), .binary(large), .text("")] {
                try await socket.send(message)
                let echoed = try await messages.next()
                try context.expect(echoed == message, "sent \(message.data.count) bytes, the echo was \(echoed?.data.count ?? -1)")
            }
            try await socket.ping()
            try await socket.close(.normalClosure, reason: "done")
            let closed = try await socket.closed
            try context.expect(
                closed == WebSocketClose(initiator: .client, code: .normalClosure, reason: "done"), "the client's close ended as \(closed)")
            try context.expect(try await messages.next() == nil, "messages went on after the close")

            let closing = try await executor.webSocket(.get |> url(peer + "/close?code=4000&reason=bye"))
            for try await _ in closing.messages {}
            let byServer = try await closing.closed
            try context.expect(
                byServer == WebSocketClose(initiator: .server, code: WebSocketCloseCode(rawValue: 4000), reason: "bye"),
                "the server's close ended as \(byServer)")

            let refused = try await context.error { _ = try await executor.webSocket(.get |> url(peer + "/refuse") |> bearer("WS-SECRET")) }
            guard case .webSocket(let failure) = refused.cause, failure.kind == .upgradeRefused else {
                throw context.failure("a refused handshake failed with \(refused), not upgradeRefused")
            }
            try context.expect(refused.status == 403, "the refusal's status was \(refused.status ?? 0)")
            try context.expect(refused.response?.body == Data("no sockets for you".utf8), "the refusal's body was not kept")
            try context.expect(!refused.description.contains("WS-SECRET"), "the error shows the credential")
        },
        ConformanceCase("webSocket: a message handler gets every echo in order; sends that do not wait (enqueue) go out in order") { context in
            let executor = context.executor(ConformanceOptions())
            guard executor.exchange.transport is any UpgradesConnections else { return }
            guard let peer = context.servers.webSocket else {
                throw context.failure("\(ConformanceServers.webSocketEnvironmentName) is not set: run the tests with scripts/test")
            }
            let count = 500
            let (echoes, feed) = AsyncStream.makeStream(of: WebSocketMessage.self)
            let socket = try await executor.webSocket(.get |> url(peer + "/echo") |> timeout(30)) { _, message in
                feed.yield(message)
            }
            // A burst larger than a socket buffer takes at once: some go at once, the rest queue.
            let sent = (0..<count).map { index -> WebSocketMessage in
                index % 3 == 0 ? .binary(Data(repeating: UInt8(truncatingIfNeeded: index), count: 4_000)) : .text("message \(index)")
            }
            for message in sent { try socket.enqueue(message) }
            var received: [WebSocketMessage] = []
            for await message in echoes {
                received.append(message)
                if received.count == count { break }
            }
            try context.expect(received == sent, "the handler got \(received.count) of \(count) echoes, or out of order")
            try await socket.close()
            try context.expect(try await socket.closed.initiator == .client, "the close did not end the socket cleanly")
        },
    ]
}
