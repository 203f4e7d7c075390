import Courier
import Foundation

extension ConformanceSuite {
    /// Streamed bodies: early heads, slow readers, early stops.
    static let streaming: [ConformanceCase] = [
        ConformanceCase("streaming: the head arrives while the body is still arriving", needs: [.timing]) { context in
            let clock = ContinuousClock()
            let start = clock.now
            // 5 bytes over 2 s, after the head.
            let response = try await context.executor().stream(
                context.httpbin() |> path("drip") |> query("numbytes", 5) |> query("duration", 2) |> query("delay", 0))
            let headAt = clock.now
            let body = try await response.body.collect(upTo: 100)
            try context.expect(body.count == 5, "got \(body.count) of 5 bytes")
            try context.expect(clock.now - headAt > .seconds(1.2), "the head came only \(clock.now - headAt) before the end")
            try context.expect(headAt - start < clock.now - start, "the head came last")
        },
        ConformanceCase("streaming: a slow reader gets every byte, in order") { context in
            let size = 12 << 20
            let response = try await context.executor().stream(
                context.stream() |> path("file") |> query("size", size), options: StreamOptions(bufferLimit: 256 << 10))
            var received = Data()
            var first = true
            for try await chunk in response.body {
                if first {
                    // Let the network run far ahead of the reader.
                    try await Task.sleep(for: .milliseconds(500))
                    first = false
                }
                received.append(chunk)
            }
            try context.expect(received.count == size, "got \(received.count) of \(size) bytes")
            try context.expect(received == streamServerBytes(0..<size), "the bytes differ from the file's")
        },
        ConformanceCase("streaming: breaking out of the loop stops the transfer") { context in
            let response = try await context.executor().stream(context.stream() |> path("bytes") |> query("size", 64 << 20))
            var seen = 0
            for try await chunk in response.body {
                seen += chunk.count
                if seen > 1 << 20 { break }
            }
            try context.expect(seen > 1 << 20 && seen < 64 << 20, "read \(seen) bytes")
        },
    ]

    /// Server-sent events across connections.
    static let events: [ConformanceCase] = [
        ConformanceCase("events: an event source reconnects with Last-Event-ID, checked at the server") { context in
            let executor = context.executor()
            let key = UUID().uuidString
            let source = EventSource(
                context.stream() |> path("sse") |> query("key", key) |> query("count", 7) |> query("per_connection", 3) |> query("retry", 50),
                executor: executor)
            var ids: [String] = []
            for try await event in source {
                ids.append(event.id ?? "")
                try context.expect(event.data == "event \(event.id ?? "")", "event \(event.id ?? "") carried \(event.data)")
            }
            try context.expect(ids == ["1", "2", "3", "4", "5", "6", "7"], "got events \(ids)")
            let log = try await executor.send(context.stream() |> path("log") |> query("key", key) |> decode([String?].self))
            // The last connection is answered 204: the client stops there.
            try context.expect(log == [nil, "3", "6", "7"], "the server saw Last-Event-ID \(log)")
        }
    ]
}
