// WebSocket echo round trips, one batch per process: `Benchmarks/run` with
// `COURIER_BENCH_ONLY=websocket` runs this against its echo server (WebSocketEchoServer), each
// batch in a fresh process, the clients interleaved (Benchmarks/live.py, Benchmarks/README.md).
//
//   CourierWebSocketBenchmarks --live-row small|large|json|json1k --variant V --url ws://HOST:PORT/ --concurrency N --total T
//     small: a text message of 100 bytes; large: a binary message of 1 MiB (random bytes);
//     json: a text message of 16 KiB of JSON (compressible); json1k: the same JSON, 1 KiB (the
//     smallest message Courier compresses by default)
//     V: courier, courier-deflate (Courier's socket on CourierNIO, permessage-deflate asked
//     for), courier-deflate-takeover (the same, each message compressed with the ones before it
//     as history), courier-loop (each socket's task on one of the transport's event loops),
//     courier-handler (each echo taken by a message handler on the connection's event loop,
//     the next message sent from it with `enqueue`),
//     hummingbird, hummingbird-deflate (swift-websocket's WebSocketClient),
//     websocketkit (vapor/websocket-kit, callbacks on its event loop), websocketkit-spread (the
//     same, each socket on the next of the group's loops), websocketkit-async (the
//     same from a task, echoes read from an AsyncStream)
//
// N sockets are opened and warmed up; the clock and the CPU count start when all are ready and
// stop when the last has done its share of T round trips (send a message, read its echo, check
// its size). Prints one JSON object: {throughput (round trips a second), cpuPerRequest (seconds
// of user + system CPU a round trip), megabytesPerSecond (echoed payload, both ways)}.
import Foundation

struct Options {
    var kind = Kind.small
    var variant = ""
    var url = ""
    var concurrency = 1
    var total = 1000

    init(_ arguments: [String]) throws {
        var iterator = arguments.dropFirst().makeIterator()
        while let flag = iterator.next() {
            guard let value = iterator.next() else { throw BenchmarkError("\(flag) needs a value") }
            switch flag {
            case "--live-row":
                guard let kind = Kind(rawValue: value) else { throw BenchmarkError("no kind \(value)") }
                self.kind = kind
            case "--variant": variant = value
            case "--url": url = value
            case "--concurrency": concurrency = Int(value) ?? 0
            case "--total": total = Int(value) ?? 0
            default: throw BenchmarkError("unknown option \(flag)")
            }
        }
        guard concurrency >= 1, total >= concurrency, !url.isEmpty else {
            throw BenchmarkError("usage: --live-row KIND --variant V --url URL --concurrency N --total T")
        }
    }
}

let options: Options
do {
    options = try Options(CommandLine.arguments)
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(2)
}
let payload = Payload(options.kind)
let batch = Batch(sockets: options.concurrency, roundTrips: options.total / options.concurrency, payload: payload)
do {
    let result: Race.Result
    switch options.variant {
    case "courier": result = try await runCourier(url: options.url, batch: batch, deflate: false)
    case "courier-loop": result = try await runCourier(url: options.url, batch: batch, deflate: false, onLoops: true)
    case "courier-handler": result = try await runCourierHandler(url: options.url, batch: batch)
    case "courier-deflate": result = try await runCourier(url: options.url, batch: batch, deflate: true)
    case "courier-deflate-takeover": result = try await runCourier(url: options.url, batch: batch, deflate: true, takeover: true)
    case "hummingbird": result = try await runHummingbird(url: options.url, batch: batch, deflate: false)
    case "hummingbird-deflate": result = try await runHummingbird(url: options.url, batch: batch, deflate: true)
    case "websocketkit": result = try await runWebSocketKit(url: options.url, batch: batch, callbacks: true)
    case "websocketkit-spread": result = try await runWebSocketKit(url: options.url, batch: batch, callbacks: true, spread: true)
    case "websocketkit-async": result = try await runWebSocketKit(url: options.url, batch: batch, callbacks: false)
    default: throw BenchmarkError("unknown variant \(options.variant)")
    }
    let roundTrips = Double(batch.sockets * batch.roundTrips)
    let object: [String: Double] = [
        "throughput": roundTrips / result.seconds,
        "cpuPerRequest": result.cpuSeconds / roundTrips,
        "megabytesPerSecond": roundTrips * Double(2 * payload.size) / result.seconds / 1e6,
    ]
    let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    print(String(decoding: data, as: UTF8.self))
} catch {
    FileHandle.standardError.write(Data("\(options.variant): \(error)\n".utf8))
    exit(1)
}
