// Courier's socket on its own transport, as an application opens it: the handshake a request
// with a timeout, a 16 MiB message limit, messages read from `messages`. With `onLoops`, each
// socket's task prefers one of the transport's event loops in turn (EventLoopTaskExecutor), as
// CourierNIO's docs suggest for a long-running worker: the socket's connection opens on that
// loop, and its read loop (a task the socket starts, which inherits the preference) runs there.
import Courier
import CourierNIO
import Foundation

func runCourier(url address: String, batch: Batch, deflate: Bool, takeover: Bool = false, onLoops: Bool = false) async throws -> Race.Result {
    let executor = NIOExecutor.shared
    let socketOptions = {
        var options = WebSocketOptions(maximumMessageSize: 16 << 20)
        if deflate {
            var compression = WebSocketCompression.permessageDeflate
            // With the context taken over, each message is compressed with the ones before it as
            // history, as zlib's clients (swift-websocket's among them) do by default.
            compression.clientNoContextTakeover = !takeover
            options.compression = compression
        }
        return options
    }()
    let message = courierMessage(batch.payload)
    let size = batch.payload.size
    let race = Race(sockets: batch.sockets)
    try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<batch.sockets {
            let loop: (any TaskExecutor)? =
                if onLoops, #available(macOS 15, *) { executor.transport.taskExecutor() } else { nil }
            group.addTask(executorPreference: loop) {
                let socket = try await executor.webSocket(.get |> url(address) |> timeout(10), options: socketOptions)
                if deflate, socket.compression == nil { throw BenchmarkError("the server declined permessage-deflate") }
                if takeover, socket.compression?.clientNoContextTakeover != false { throw BenchmarkError("the context is not taken over") }
                var replies = socket.messages.makeAsyncIterator()
                func roundTrip() async throws {
                    try await socket.send(message)
                    guard let reply = try await replies.next() else { throw BenchmarkError("the socket closed") }
                    let count = byteCount(reply)
                    if count != size { throw BenchmarkError("an echo of \(count) bytes, not \(size)") }
                }
                for _ in 0..<batch.payload.warmUp { try await roundTrip() }
                await race.ready()
                for _ in 0..<batch.roundTrips { try await roundTrip() }
                await race.done()
                try await socket.close()
            }
        }
        try await group.waitForAll()
    }
    return try await race.outcome()
}

/// Courier's socket with a message handler (`webSocket(_:options:onMessage:)`): each echo's
/// handler, where the connection's bytes arrive (its event loop), sending the next message with
/// `enqueue`, as websocket-kit's callbacks do; no task a round trip.
func runCourierHandler(url address: String, batch: Batch) async throws -> Race.Result {
    let executor = NIOExecutor.shared
    let socketOptions = WebSocketOptions(maximumMessageSize: 16 << 20)
    let message = courierMessage(batch.payload)
    let size = batch.payload.size
    let race = Race(sockets: batch.sockets)
    try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<batch.sockets {
            group.addTask {
                let rounds = Rounds()
                let socket = try await executor.webSocket(.get |> url(address) |> timeout(10), options: socketOptions) { socket, reply in
                    let count = byteCount(reply)
                    guard count == size else {
                        rounds.finish(BenchmarkError("an echo of \(count) bytes, not \(size)"))
                        return
                    }
                    guard rounds.next() else { return }
                    do {
                        try socket.enqueue(message)
                    } catch {
                        rounds.finish(error)
                    }
                }
                try await rounds.run(batch.payload.warmUp) { try socket.enqueue(message) }
                await race.ready()
                try await rounds.run(batch.roundTrips) { try socket.enqueue(message) }
                await race.done()
                try await socket.close()
            }
        }
        try await group.waitForAll()
    }
    return try await race.outcome()
}

/// The round trips left to one handler-driven socket and the task waiting for them.
private final class Rounds: @unchecked Sendable {
    private let lock = NSLock()
    private var left = 0
    private var waiter: CheckedContinuation<Void, any Error>?

    /// Runs `count` round trips: `start` sends the first, each echo's handler the next.
    func run(_ count: Int, start: () throws -> Void) async throws {
        try await withCheckedThrowingContinuation { continuation in
            lock.withLock { (left, waiter) = (count, continuation) }
            do {
                try start()
            } catch {
                finish(error)
            }
        }
    }

    /// An echo arrived: `true` when another message is to be sent, `false` when the batch is done
    /// (its waiter resumed).
    func next() -> Bool {
        let done: CheckedContinuation<Void, any Error>? = lock.withLock {
            left -= 1
            guard left == 0 else { return nil }
            defer { waiter = nil }
            return waiter
        }
        guard let done else { return true }
        done.resume()
        return false
    }

    /// Ends the batch with `error`.
    func finish(_ error: any Error) {
        let waiter: CheckedContinuation<Void, any Error>? = lock.withLock {
            defer { self.waiter = nil }
            return self.waiter
        }
        waiter?.resume(throwing: error)
    }
}

/// The batch's payload as Courier's message.
private func courierMessage(_ payload: Payload) -> WebSocketMessage {
    switch payload.form {
    case .text(let text): .text(text)
    case .binary(let bytes): .binary(Data(bytes))
    }
}

/// How many bytes an echo carries (a text's in UTF-8).
private func byteCount(_ reply: WebSocketMessage) -> Int {
    switch reply {
    case .text(let text): text.utf8.count
    case .binary(let data): data.count
    }
}
