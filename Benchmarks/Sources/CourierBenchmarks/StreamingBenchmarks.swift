import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// 7. Streaming: a 1 GB body through `stream` and to a file, each in a fresh process (the run
/// script starts one per row), against the best raw URLSession equivalent; parser throughput.
enum StreamingBenchmarks {
    /// One row's measurement: seconds, bytes and the process's peak resident memory.
    struct Measurement: Codable {
        var seconds: Double
        var bytes: Int64
        var peakMegabytes: Double
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Streams the body through `URLSessionExecutor.stream`, counting bytes.
    static func courierStream(_ address: String) async throws -> Measurement {
        let executor = URLSessionExecutor(configuration: .ephemeral)
        let clock = ContinuousClock()
        let start = clock.now
        let response = try await executor.stream(Request.get |> url(address))
        var total: Int64 = 0
        for try await chunk in response.body { total += Int64(chunk.count) }
        return Measurement(seconds: seconds(clock.now - start), bytes: total, peakMegabytes: residentMegabytes(field: "VmHWM") ?? .nan)
    }

    /// The raw equivalent: a data task whose delegate counts the bytes and keeps none
    /// (FoundationNetworking has no `bytes(for:)`).
    static func rawStream(_ address: String) async throws -> Measurement {
        final class Counter: NSObject, URLSessionDataDelegate, @unchecked Sendable {
            var total: Int64 = 0
            var done: CheckedContinuation<Int64, any Error>?
            func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) { total += Int64(data.count) }
            func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
                if let error { done?.resume(throwing: error) } else { done?.resume(returning: total) }
            }
        }
        let counter = Counter()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let session = URLSession(configuration: LiveBenchmarks.baselineConfiguration, delegate: counter, delegateQueue: queue)
        defer { session.finishTasksAndInvalidate() }
        let clock = ContinuousClock()
        let start = clock.now
        let total = try await withCheckedThrowingContinuation { continuation in
            queue.addOperation {
                counter.done = continuation
                session.dataTask(with: URL(string: address)!).resume()
            }
        }
        return Measurement(seconds: seconds(clock.now - start), bytes: total, peakMegabytes: residentMegabytes(field: "VmHWM") ?? .nan)
    }

    /// Downloads to a file with `Executor.download`.
    static func courierDownload(_ address: String, directory: String) async throws -> Measurement {
        let destination = URL(fileURLWithPath: directory).appendingPathComponent("courier-download.bin")
        defer { try? FileManager.default.removeItem(at: destination) }
        let executor = URLSessionExecutor(configuration: .ephemeral)
        let clock = ContinuousClock()
        let start = clock.now
        let download = try await executor.download(Request.get |> url(address), to: destination, options: DownloadOptions(resumes: false))
        return Measurement(
            seconds: seconds(clock.now - start), bytes: download.size, peakMegabytes: residentMegabytes(field: "VmHWM") ?? .nan)
    }

    /// The raw equivalent: `URLSession.download(for:)`, then moving the file into place.
    static func rawDownload(_ address: String, directory: String) async throws -> Measurement {
        let destination = URL(fileURLWithPath: directory).appendingPathComponent("raw-download.bin")
        defer { try? FileManager.default.removeItem(at: destination) }
        let session = URLSession(configuration: LiveBenchmarks.baselineConfiguration)
        defer { session.finishTasksAndInvalidate() }
        let clock = ContinuousClock()
        let start = clock.now
        let (temporary, _) = try await session.download(for: URLRequest(url: URL(string: address)!))
        try? FileManager.default.removeItem(at: destination)
        try FileManager.default.moveItem(at: temporary, to: destination)
        let size = (try FileManager.default.attributesOfItem(atPath: destination.path)[.size] as? NSNumber)?.int64Value ?? 0
        return Measurement(seconds: seconds(clock.now - start), bytes: size, peakMegabytes: residentMegabytes(field: "VmHWM") ?? .nan)
    }

    /// Reads every event of `stream` from main-actor code, as an app's view model does.
    @MainActor
    static func countEventsOnMainActorHopping(_ stream: ByteStream) async throws -> Int {
        var count = 0
        var iterator = stream.serverSentEvents.makeAsyncIterator()
        while let event = try await iterator.next() { count += event.data.utf8.count }
        return count
    }

    @MainActor
    static func countEventsOnMainActor(_ stream: ByteStream) async throws -> Int {
        var count = 0
        for try await event in stream.serverSentEvents { count += event.data.utf8.count }
        return count
    }

    /// Lines and server-sent events parsed per second from memory (no network): the parsers'
    /// own cost.
    static func parsers(runs: Int) async throws -> [String] {
        var text = ""
        var index = 0
        while text.utf8.count < 1 << 20 {
            text += "data: {\"id\":\(index),\"delta\":\"some streamed text of a typical length for a token\"}\r\n\r\n"
            index += 1
        }
        let block = Data(text.utf8)
        let chunks = stride(from: 0, to: block.count, by: 16 << 10).map { block[$0..<min($0 + (16 << 10), block.count)] }
        let repeats = 64  // 64 MB per run
        func measure(_ body: (ByteStream) async throws -> Int) async throws -> [Double] {
            var rates: [Double] = []
            for _ in 0..<runs {
                let stream = ByteStream(chunks: Array(repeating: chunks, count: repeats).flatMap { $0 })
                let clock = ContinuousClock()
                let start = clock.now
                blackHole(try await body(stream))
                rates.append(Double(block.count * repeats) / 1e6 / seconds(clock.now - start))
            }
            return rates
        }
        let lines = try await measure { stream in
            var count = 0
            for try await line in stream.lines { count += line.utf8.count }
            return count
        }
        let events = try await measure { stream in
            var count = 0
            for try await event in stream.serverSentEvents { count += event.data.utf8.count }
            return count
        }
        // The same events read by main-actor code (a view model appending tokens): with
        // `next(isolation:)` the loop stays on the main actor instead of hopping per event.
        let onMain = try await measure { stream in try await Self.countEventsOnMainActor(stream) }
        // The same loop calling the nonisolated `next()` (what main-actor code got before
        // `next(isolation:)`): one hop off the main actor and back per event.
        let hopping = try await measure { stream in try await Self.countEventsOnMainActorHopping(stream) }
        func row(_ name: String, _ rates: [Double]) -> String {
            let sorted = rates.sorted()
            return String(
                format: "| %@ | %.0f MB/s (%.0f..%.0f) | | | reported |", name, sorted[sorted.count / 2], sorted.first ?? 0,
                sorted.last ?? 0)
        }
        let ratios = zip(onMain, events).map { $0 / $1 }.sorted()
        let mainRow = String(
            format: "| 7g. server-sent events iterated on the main actor vs nonisolated, 64 MB | %.0f MB/s | %.0f MB/s | %.2f (%.2f..%.2f) | ≥ 0.5 |",
            onMain.sorted()[onMain.count / 2], events.sorted()[events.count / 2], ratios[ratios.count / 2], ratios.first ?? 0,
            ratios.last ?? 0)
        let hopRow = String(
            format: "| 7g (context). the same on the main actor through the nonisolated next() | %.0f MB/s | | | context |",
            hopping.sorted()[hopping.count / 2])
        return [
            row("7e. lines parser, 64 MB in 16 KB chunks", lines), row("7f. server-sent events parser, 64 MB", events), mainRow,
            hopRow,
        ]
    }
}
