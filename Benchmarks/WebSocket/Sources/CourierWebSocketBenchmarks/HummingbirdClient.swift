// hummingbird-project/swift-websocket's WebSocketClient as its README uses it: the socket's work
// in the closure `connect` runs, messages read from the inbound stream's `messages(maxSize:)`,
// written with the outbound writer; its defaults otherwise (no UTF-8 check of text, which
// Courier always makes).
import Logging
import NIOCore
import WSClient
import WSCompression

func runHummingbird(url: String, batch: Batch, deflate: Bool) async throws -> Race.Result {
    let logger = {
        var logger = Logger(label: "benchmark")
        logger.logLevel = .error
        return logger
    }()
    let configuration = WebSocketClientConfiguration(
        maxFrameSize: 16 << 20, extensions: deflate ? [.perMessageDeflate(maxDecompressedFrameSize: 16 << 20)] : [])
    let message: WebSocketMessage =
        switch batch.payload.form {
        case .text(let text): .text(text)
        case .binary(let bytes): .binary(ByteBuffer(bytes: bytes))
        }
    let size = batch.payload.size
    let race = Race(sockets: batch.sockets)
    try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<batch.sockets {
            group.addTask {
                try await WebSocketClient.connect(url: url, configuration: configuration, logger: logger) { inbound, outbound, _ in
                    var replies = inbound.messages(maxSize: 16 << 20).makeAsyncIterator()
                    func roundTrip() async throws {
                        switch message {
                        case .text(let text): try await outbound.write(.text(text))
                        case .binary(let bytes): try await outbound.write(.binary(bytes))
                        }
                        guard let reply = try await replies.next() else { throw BenchmarkError("the socket closed") }
                        let count =
                            switch reply {
                            case .text(let text): text.utf8.count
                            case .binary(let bytes): bytes.readableBytes
                            }
                        if count != size { throw BenchmarkError("an echo of \(count) bytes, not \(size)") }
                    }
                    for _ in 0..<batch.payload.warmUp { try await roundTrip() }
                    await race.ready()
                    for _ in 0..<batch.roundTrips { try await roundTrip() }
                    await race.done()
                }
            }
        }
        try await group.waitForAll()
    }
    return try await race.outcome()
}
