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
    let message: WebSocketMessage =
        switch batch.payload.form {
        case .text(let text): .text(text)
        case .binary(let bytes): .binary(Data(bytes))
        }
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
                    let count =
                        switch reply {
                        case .text(let text): text.utf8.count
                        case .binary(let data): data.count
                        }
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
