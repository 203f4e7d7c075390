import CourierCore
import CourierResilience
import CourierTesting
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
            let produced = ProducedChunks()
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
        ConformanceCase("uploads: a known length is sent as Content-Length, an unknown one chunked") { context in
            let executor = context.executor()
            let file = temporaryFile()
            defer { cleanUp(file) }
            try Data(repeating: 0x46, count: 300_000).write(to: file)
            func sequence() -> AsyncStream<Data> {
                AsyncStream { continuation in
                    for _ in 0..<3 { continuation.yield(Data(repeating: 0x53, count: 100_000)) }
                    continuation.finish()
                }
            }
            let upload = context.stream(.put) |> path("upload")
            let bodies: [(String, Request, String)] = [
                ("data", upload |> body(Data(repeating: 0x44, count: 300_000)), "length"),
                ("a file", upload |> CourierCore.upload(file), "length"),
                ("parts", upload |> multipart([.field("a", "b"), .file("f", at: file)]), "length"),
                ("a sequence with a length", upload |> CourierCore.upload(sequence(), length: 300_000), "length"),
                ("a sequence without a length", upload |> CourierCore.upload(sequence()), "chunked"),
            ]
            for (name, request, framing) in bodies {
                let received = try await executor.send(request |> decode(Received.self))
                try context.expect(received.framing == framing, "\(name) was framed as \(received.framing ?? "nothing"), not \(framing)")
                try context.expect(received.length >= 300_000, "\(name): the server received \(received.length) bytes")
            }
            // The same through stream(_:options:), the path a generated OpenAPI client takes.
            let streamed = try await executor.stream(upload |> CourierCore.upload(sequence(), length: 300_000))
            let received = try JSONDecoder().decode(Received.self, from: try await streamed.body.collect(upTo: 1 << 20))
            try context.expect(received.framing == "length" && received.length == 300_000, "streamed: \(received.framing ?? "none"), \(received.length) bytes")
        },
        ConformanceCase("progress: upload and download progress finish however the call ends") { context in
            let executor = context.executor()
            let file = temporaryFile()
            defer { cleanUp(file) }
            try Data(repeating: 0x50, count: 200_000).write(to: file)
            let refused = refusedOrigin()
            /// Fails the case unless `progress` finished and a reader of its updates sees the end.
            func expectFinished(_ progress: TransferProgress, _ what: String) async throws {
                try context.expect(progress.current.isFinished, "\(what): progress stopped at \(progress.current)")
                var last: TransferProgress.Snapshot?
                for await snapshot in progress.updates { last = snapshot }
                try context.expect(last?.isFinished == true, "\(what): the updates ended at \(String(describing: last))")
            }
            // The head arrived.
            let answered = TransferProgress()
            let response = try await executor.stream(
                context.stream(.post) |> path("upload") |> upload(file), options: StreamOptions(uploadProgress: answered))
            response.body.cancel()
            try await expectFinished(answered, "an answered upload")
            // A failure before the head: the connection is refused.
            let failed = TransferProgress()
            _ = try await context.error {
                _ = try await executor.stream(.post |> url(refused + "/upload") |> upload(file), options: StreamOptions(uploadProgress: failed))
            }
            try await expectFinished(failed, "an upload to a refused port")
            // The deadline passes while the server holds its answer.
            let late = TransferProgress()
            let timedOut = try await context.error {
                _ = try await executor.stream(
                    context.stream(.post) |> path("upload") |> query("delay", 10) |> upload(file) |> deadline(0.5),
                    options: StreamOptions(uploadProgress: late))
            }
            try context.expect(timedOut.isTimeout, "the deadline ended the upload with \(timedOut)")
            try await expectFinished(late, "an upload past its deadline")
            // Cancellation, once the transport is reading a body that stalls.
            let cancelled = TransferProgress()
            let taken = Signal()
            let stalled = StallingBody(first: Data("start".utf8), taken: taken)
            let sending = Task {
                try await executor.stream(
                    context.stream(.post) |> path("upload") |> upload(stalled), options: StreamOptions(uploadProgress: cancelled))
            }
            await taken.wait()
            sending.cancel()
            _ = await sending.result
            try await expectFinished(cancelled, "a cancelled upload")
            // Downloads: refused, past a deadline, cancelled.
            let target = temporaryFile()
            defer { cleanUp(target) }
            let refusedDownload = DownloadOptions(progress: TransferProgress())
            _ = try await context.error { _ = try await executor.download(.get |> url(refused + "/file"), to: target, options: refusedDownload) }
            if let progress = refusedDownload.progress { try await expectFinished(progress, "a download from a refused port") }
            let slowDownload = DownloadOptions(progress: TransferProgress())
            _ = try await context.error {
                _ = try await executor.download(
                    context.httpbin() |> path("drip") |> query("duration", 10) |> query("numbytes", 5) |> deadline(0.5), to: target,
                    options: slowDownload)
            }
            if let progress = slowDownload.progress { try await expectFinished(progress, "a download past its deadline") }
            let cancelledDownload = DownloadOptions(progress: TransferProgress())
            let downloading = Task {
                try await executor.download(
                    context.httpbin() |> path("drip") |> query("duration", 10) |> query("numbytes", 5), to: target, options: cancelledDownload)
            }
            downloading.cancel()
            _ = await downloading.result
            if let progress = cancelledDownload.progress { try await expectFinished(progress, "a cancelled download") }
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
        ConformanceCase("uploads: a cancelled upload never reaches the server as a complete body") { context in
            // A chunked body cut short by a cancel must not end with its last chunk: the server
            // would take the start of the body for all of it. The upload is cancelled once the
            // transport has taken 40 of its 400 chunks (2.5 MiB, which the server, reading slowly
            // from the start, is reading): decided by progress, so no machine is slow enough for
            // the body to end first. (Asking the server how much it has would wait behind the
            // upload on FoundationNetworking: the Known limits article. A body sent with its length
            // cannot be taken for complete when it is cut short. Cancelling a file upload
            // mid-body is not run here: FoundationNetworking can trap then.)
            let executor = context.executor()
            let key = UUID().uuidString
            let taken = Signal()
            let body = PacedBody(count: 400, size: 65_536, gap: .milliseconds(10), taken: (40, taken))
            let request = context.stream(.post) |> path("upload") |> query("key", key) |> query("pace", 5) |> upload(body)
            let sending = Task { try await executor.send(request) }
            let status = context.stream() |> path("uploaded") |> query("key", key) |> decode(Uploaded?.self)
            var uploaded: Uploaded?
            await taken.wait()
            sending.cancel()
            let error = try await context.error { _ = try await sending.value }
            try context.expect(error.isCancellation, "got \(error)")
            // What the server made of it, once it stopped reading.
            while uploaded?.done != true {
                try await Task.sleep(for: .milliseconds(20))
                uploaded = try await executor.send(status)
            }
            try context.expect(
                uploaded?.complete == false, "the server took \(uploaded?.length ?? 0) bytes of a cancelled upload for the whole body")
        },
        ConformanceCase("uploads: cancelling a stalled sequence upload ends it at once") { context in
            let executor = context.executor()
            // "start", then nothing, ever: the upload can only end by the cancel.
            let taken = Signal()
            let request = context.stream(.post) |> path("upload") |> upload(StallingBody(first: Data("start".utf8), taken: taken))
            let sending = Task { try await executor.send(request) }
            await taken.wait()  // the transport is reading the body
            sending.cancel()
            let error = try await context.error { _ = try await sending.value }
            try context.expect(error.isCancellation, "got \(error)")
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
