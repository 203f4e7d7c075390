import CourierCore
import CourierResilience
import CourierTesting
import Foundation

extension ConformanceSuite {
    /// Streamed bodies: early heads, slow readers, early stops.
    static let streaming: [ConformanceCase] = [
        ConformanceCase("streaming: the head arrives while the body is still arriving") { context in
            // The server holds the rest of the body until asked for it, which the case does only
            // once it has the head: a transport that waited for the body before handing the head
            // over would get it only after the server's 30 s fallback, and the server says which.
            let executor = context.executor()
            let key = UUID().uuidString
            let response = try await executor.stream(context.stream() |> path("gated") |> query("key", key) |> query("size", 50_000))
            _ = try await executor.send(context.stream() |> path("open") |> query("key", key))
            let body = try await response.body.collect(upTo: 1 << 20)
            try context.expect(body == streamServerBytes(0..<50_000), "got \(body.count) of 50000 bytes")
            struct Opened: Decodable { var by: String? }
            let opened = try await executor.send(context.stream() |> path("opened") |> query("key", key) |> decode(Opened.self))
            try context.expect(opened.by == "gate", "the body was released by \(opened.by ?? "nothing"), not by the case after the head")
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
