// vapor/websocket-kit two ways, a 16 MiB frame limit, the bytes written from one prepared
// ByteBuffer, no permessage-deflate (websocket-kit has none):
// - `callbacks`: at its fastest, on the connection's event loop, each echo's callback sending the
//   next message (no task hop a round trip), as its README's echo does;
// - async: as an application with async code around each message uses it, the callbacks
//   feeding an AsyncStream that a task reads, each message sent with `send(_:opcode:promise:)`
//   and its write awaited.
import Foundation
import NIOCore
import NIOWebSocket
import NIOPosix
import WebSocketKit

func runWebSocketKit(url: String, batch: Batch, callbacks: Bool, spread: Bool = false) async throws -> Race.Result {
    let singleton = MultiThreadedEventLoopGroup.singleton
    let configuration = {
        var configuration = WebSocketClient.Configuration(maxFrameSize: 16 << 20)
        configuration.maxAccumulatedFrameSize = 16 << 20
        return configuration
    }()
    let (bytes, opcode): (ByteBuffer, WebSocketOpcode) =
        switch batch.payload.form {
        case .text(let text): (ByteBuffer(string: text), .text)
        case .binary(let bytes): (ByteBuffer(bytes: bytes), .binary)
        }
    let size = batch.payload.size
    let race = Race(sockets: batch.sockets)
    try await withThrowingTaskGroup(of: Void.self) { tasks in
        for _ in 0..<batch.sockets {
            // `connect(on: group)` asks the group for a loop twice a socket (its promise's
            // `any()`, then the bootstrap's `next()`), so with two loops every socket lands on the
            // same one; `spread` names each socket's loop in turn, as Courier's transport and
            // swift-websocket's client place theirs.
            let group: any EventLoopGroup = spread ? singleton.next() : singleton
            tasks.addTask {
                let socket: WebSocket = try await withCheckedThrowingContinuation { continuation in
                    WebSocket.connect(to: url, configuration: configuration, on: group) { continuation.resume(returning: $0) }
                        .whenFailure { continuation.resume(throwing: $0) }
                }
                if !callbacks {
                    try await asyncRoundTrips(socket, bytes: bytes, opcode: opcode, batch: batch, race: race)
                    return
                }
                /// Runs `count` round trips, each echo's callback sending the next message.
                func roundTrips(_ count: Int) async throws {
                    let finished = socket.eventLoop.makePromise(of: Void.self)
                    socket.eventLoop.execute {
                        nonisolated(unsafe) var left = count
                        let received: @Sendable (WebSocket, Int) -> Void = { socket, count in
                            guard count == size else {
                                finished.fail(BenchmarkError("an echo of \(count) bytes, not \(size)"))
                                return
                            }
                            left -= 1
                            if left == 0 { finished.succeed() } else { socket.send(bytes, opcode: opcode) }
                        }
                        socket.onText { socket, text in received(socket, text.utf8.count) }
                        socket.onBinary { socket, buffer in received(socket, buffer.readableBytes) }
                        socket.onClose.whenComplete { _ in finished.fail(BenchmarkError("the socket closed")) }
                        socket.send(bytes, opcode: opcode)
                    }
                    try await finished.futureResult.get()
                }
                try await roundTrips(batch.payload.warmUp)
                await race.ready()
                try await roundTrips(batch.roundTrips)
                await race.done()
                try await socket.close(code: .normalClosure).get()
            }
        }
        try await tasks.waitForAll()
    }
    return try await race.outcome()
}

/// The round trips of one socket from a task: each echo read from an AsyncStream the callbacks
/// feed, each message's write awaited.
private func asyncRoundTrips(_ socket: WebSocket, bytes: ByteBuffer, opcode: WebSocketOpcode, batch: Batch, race: Race) async throws {
    let (echoes, feed) = AsyncStream.makeStream(of: Int.self)
    // websocket-kit takes its callbacks on the connection's event loop.
    try await socket.eventLoop.submit {
        socket.onText { _, text in feed.yield(text.utf8.count) }
        socket.onBinary { _, buffer in feed.yield(buffer.readableBytes) }
        socket.onClose.whenComplete { _ in feed.finish() }
    }.get()
    var replies = echoes.makeAsyncIterator()
    let size = batch.payload.size
    func roundTrip() async throws {
        let written = socket.eventLoop.makePromise(of: Void.self)
        socket.send(bytes, opcode: opcode, promise: written)
        try await written.futureResult.get()
        guard let count = await replies.next() else { throw BenchmarkError("the socket closed") }
        if count != size { throw BenchmarkError("an echo of \(count) bytes, not \(size)") }
    }
    for _ in 0..<batch.payload.warmUp { try await roundTrip() }
    await race.ready()
    for _ in 0..<batch.roundTrips { try await roundTrip() }
    await race.done()
    try await socket.close(code: .normalClosure).get()
}
