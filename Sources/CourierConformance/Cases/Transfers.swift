import Courier
import Foundation

extension ConformanceSuite {
    /// Request bodies read at send time: files, sequences, multipart.
    static let uploads: [ConformanceCase] = [
        ConformanceCase("uploads: a file is sent whole, with progress") { context in
            let executor = context.executor()
            let file = temporaryFile()
            defer { cleanUp(file) }
            let size = 5_000_000
            try streamServerBytes(0..<size).write(to: file)
            let progress = TransferProgress()
            let response = try await executor.stream(
                context.stream(.post) |> path("upload") |> upload(file), options: StreamOptions(uploadProgress: progress))
            let received = try JSONDecoder().decode(Received.self, from: try await response.body.collect(upTo: 1 << 20))
            try context.expect(received.length == size, "the server received \(received.length) of \(size) bytes")
            try context.expect(received.contentType == "application/octet-stream", "Content-Type \(received.contentType ?? "none")")
            try context.expect(progress.current.completed == Int64(size) && progress.current.isFinished, "progress ended at \(progress.current)")
            let again = try await executor.send(context.stream(.put) |> path("upload") |> upload(file) |> decode(Received.self))
            try context.expect(again.length == size && again.crc32 == received.crc32, "send: \(again.length) bytes, crc \(again.crc32)")
        },
        ConformanceCase("uploads: a sequence is sent while it is produced, with or without a length") { context in
            let executor = context.executor()
            let produced = Counter()
            let chunks = AsyncStream<Data> { continuation in
                Task {
                    for _ in 0..<20 {
                        try? await Task.sleep(for: .milliseconds(20))
                        produced.increment()
                        continuation.yield(Data(repeating: 0x43, count: 50_000))
                    }
                    continuation.finish()
                }
            }
            let unsized = try await executor.send(context.stream(.post) |> path("upload") |> upload(chunks) |> decode(Received.self))
            try context.expect(unsized.length == 1_000_000, "received \(unsized.length) of 1000000 bytes")
            try context.expect(produced.value == 20, "the producer made \(produced.value) of 20 chunks")
            let sized = AsyncStream<Data> { continuation in
                for _ in 0..<10 { continuation.yield(Data(repeating: 0x41, count: 100_000)) }
                continuation.finish()
            }
            let declared = try await executor.send(
                context.stream(.post) |> path("upload") |> upload(sized, length: 1_000_000) |> decode(Received.self))
            try context.expect(declared.length == 1_000_000, "received \(declared.length) of 1000000 bytes")
            let short = AsyncStream<Data> { continuation in
                continuation.yield(Data(repeating: 1, count: 10))
                continuation.finish()
            }
            _ = try await context.error { _ = try await executor.send(context.stream(.post) |> path("upload") |> upload(short, length: 100)) }
        },
        ConformanceCase("uploads: a multipart body with a file part arrives as a form") { context in
            let file = temporaryFile()
            defer { cleanUp(file) }
            try Data("hello from disk".utf8).write(to: file)
            let echo = try await context.executor().send(
                context.httpbin(.post) |> path("anything")
                    |> multipart([.field("title", "x"), .file("doc", at: file, contentType: .plainText)]) |> decode(Anything.self))
            try context.expect(echo.form?["title"] == "x", "the form was \(String(describing: echo.form))")
            try context.expect(echo.method == "POST", "the method was \(echo.method)")
        },
        ConformanceCase("uploads: cancelling a stalled sequence upload ends it at once") { context in
            let executor = context.executor()
            let never = AsyncStream<Data> { continuation in
                continuation.yield(Data("start".utf8))  // then nothing, ever
            }
            let request = context.stream(.post) |> path("upload") |> upload(never)
            let sending = Task { try await executor.send(request) }
            try await Task.sleep(for: .milliseconds(300))
            let clock = ContinuousClock()
            let start = clock.now
            sending.cancel()
            let error = try await context.error { _ = try await sending.value }
            try context.expect(error.isCancellation, "got \(error)")
            try context.expect(clock.now - start < .seconds(2), "ended \(clock.now - start) after the cancel")
        },
    ]

    /// Downloads to a file: resumed byte-exact, or started over.
    static let downloads: [ConformanceCase] = [
        ConformanceCase("downloads: a cut download resumes with Range, byte-exact") { context in
            let executor = context.executor()
            let file = temporaryFile()
            defer { cleanUp(file) }
            let size = 3_000_000
            _ = try await context.error {
                _ = try await executor.download(context.stream() |> path("file") |> query("size", size) |> query("cut", 1_234_567), to: file)
            }
            // What arrived before the cut is kept: all of it on URLSession; AsyncHTTPClient drops
            // the bytes it had read ahead when the connection fails, so the partial may be shorter
            // (never longer). Either way the download resumes exactly where the partial ends.
            let partial = (try? FileManager.default.attributesOfItem(atPath: file.path + ".partial")[.size] as? NSNumber)?.intValue ?? -1
            try context.expect(partial > 0 && partial <= 1_234_567, "the partial file has \(partial) bytes")
            let progress = TransferProgress()
            let download = try await executor.download(
                context.stream() |> path("file") |> query("size", size), to: file, options: DownloadOptions(progress: progress))
            try context.expect(download.resumedFrom == Int64(partial) && download.response.status == 206, "resumed from \(download.resumedFrom)")
            try context.expect(try Data(contentsOf: file) == streamServerBytes(0..<size), "the file differs from the server's")
            try context.expect(progress.current.completed == Int64(size) && progress.current.isFinished, "progress ended at \(progress.current)")
        },
        ConformanceCase("downloads: a server that ignores Range, or a changed file, starts the download over") { context in
            let executor = context.executor()
            let file = temporaryFile()
            defer { cleanUp(file) }
            let ignoring = context.stream() |> path("file") |> query("size", 500_000) |> query("ignore_range", 1)
            _ = try await context.error { _ = try await executor.download(ignoring |> query("cut", 100_000), to: file) }
            let whole = try await executor.download(ignoring, to: file)
            try context.expect(whole.resumedFrom == 0, "resumed from \(whole.resumedFrom) over a 200")
            try context.expect(try Data(contentsOf: file) == streamServerBytes(0..<500_000), "the file differs from the server's")
            cleanUp(file)
            let base = context.stream() |> path("file") |> query("size", 400_000)
            _ = try await context.error { _ = try await executor.download(base |> query("etag", "v1") |> query("cut", 100_000), to: file) }
            let changed = try await executor.download(base |> query("etag", "v2"), to: file)
            try context.expect(changed.resumedFrom == 0 && changed.response.status == 200, "resumed from \(changed.resumedFrom)")
            try context.expect(try Data(contentsOf: file) == streamServerBytes(0..<400_000), "the file differs from the server's")
        },
    ]
}
