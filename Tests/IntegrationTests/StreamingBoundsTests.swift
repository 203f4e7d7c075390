import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The resident memory of this process, when the platform tells (Linux: /proc/self/statm).
func residentBytes() -> Int? {
    #if os(Linux)
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    #else
        return nil
    #endif
}

/// The CPU time this process has used (user and system, every thread). Steadier than the wall
/// clock on a shared machine: a build on both cores delays the process but does not make its
/// work cost more.
func processCPUTime() -> Duration {
    var usage = rusage()
    #if os(Linux)
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    #else
        getrusage(RUSAGE_SELF, &usage)
    #endif
    let user = Duration.seconds(Int64(usage.ru_utime.tv_sec)) + .microseconds(Int64(usage.ru_utime.tv_usec))
    return user + .seconds(Int64(usage.ru_stime.tv_sec)) + .microseconds(Int64(usage.ru_stime.tv_usec))
}

/// Samples resident memory every 20 ms while `body` runs; returns the most it grew.
func peakGrowth(during body: () async throws -> Void) async rethrows -> Int {
    let start = residentBytes() ?? 0
    let peak = Box(start)
    let sampler = Task {
        while !Task.isCancelled {
            if let now = residentBytes() { peak.withLock { $0 = max($0, now) } }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }
    defer { sampler.cancel() }
    try await body()
    if let now = residentBytes() { peak.withLock { $0 = max($0, now) } }
    return peak.withLock { $0 } - start
}

/// What the stream server could write of a `/bytes?key=K` body before the client hung up.
struct Sent: Decodable { var sent: Int; var done: Bool }

/// What a stop leaves behind, on fast loopback transfers of up to a gibibyte. A suite of its own,
/// run by scripts/test in a process of its own after every other suite: FoundationNetworking
/// goes on reading (and inflating) for a moment after each stop these tests cause, and requests
/// of other suites in the same process would wait behind that.
@Suite("Integration: streaming bounds", .serialized, .timeLimit(.minutes(3)))
struct StreamingBoundsTests {
    let executor = HTTPBin.executor()
    /// Whether the stream server's `/bytes` write under `key` stopped before the end of its
    /// `total` bytes (the client hung up). Waits for the server to stop writing, however long
    /// that takes (the suite's time limit is the backstop), rather than for a guessed time.
    private func serverStopped(key: String, total: Int = 1 << 30) async throws -> Bool {
        var sent = Sent(sent: 0, done: false)
        while !sent.done {
            try await Task.sleep(for: .milliseconds(50))
            sent = try await executor.send(try StreamServer.request() |> path("sent") |> query("key", key) |> decode(Sent.self))
        }
        return sent.sent < total
    }

    /// Expects the server to have stopped writing before the end of a flood: on Linux a known,
    /// intermittent limit (the Known limits article: FoundationNetworking's cancel waits while the
    /// flood lasts), so recorded as such there.
    private func expectServerStopped(key: String, total: Int = 1 << 30) async throws {
        let stopped = try await serverStopped(key: key, total: total)
        #if canImport(FoundationNetworking)
            withKnownIssue("FoundationNetworking's cancel waits for a work queue its socket reads keep busy", isIntermittent: true) {
                #expect(stopped, "the server wrote its whole body")
            }
        #else
            #expect(stopped, "the server wrote its whole body")
        #endif
    }

    private func hostile() throws -> String {
        try HostileServer.url()
    }

    /// A size limit bounds memory, not only reports: a 1 GiB gzip bomb stops at 8 MiB, at once.
    @Test func aGzipBombStopsAtTheLimitInBoundedMemory() async throws {
        let limited = URLSessionExecutor(configuration: .ephemeral, maximumResponseSize: 8 << 20)
        let bomb = Request.get |> url(try hostile() + "/gzip-bomb") |> query("size", 1 << 30) |> timeout(30)
        // The server makes the bomb before the measured requests.
        _ = try await limited.send(bomb |> query("prepare", 1))
        for streamed in [true, false] {
            let start = processCPUTime()
            var error: CourierError?
            let growth = await peakGrowth {
                error = await expectCourierError {
                    if streamed {
                        let response = try await limited.stream(bomb)
                        for try await _ in response.body {}
                    } else {
                        _ = try await limited.send(bomb)
                    }
                }
            }
            guard case .responseTooLarge(let limit) = error?.cause else {
                Issue.record("expected responseTooLarge, got \(String(describing: error))")
                return
            }
            #expect(limit == 8 << 20)
            // The reader hears of it at once: in CPU time, not on a stopwatch a busy machine
            // can push. Inflating the whole gibibyte costs seconds of CPU (3 s in zlib alone);
            // reaching the limit took 33 ms here. (FoundationNetworking then goes on inflating
            // what it had read, dropped by Courier as it comes: see Known limits. So only the
            // first request is measured.) That the stop comes with the chunk that crosses the
            // limit is ExchangeRulesTests' to show, with no clock at all.
            let cpu = processCPUTime() - start
            if streamed { #expect(cpu < .seconds(1), "reaching the 8 MiB limit of a 1 GiB bomb took \(cpu) of CPU") }
            #expect(growth < 256 << 20, "streamed: \(streamed), grew \(growth >> 20) MiB")
        }
    }

    /// A reader that stalls on a fast body: the spill file stops at its limit, and nothing that
    /// arrives after the stop is kept.
    @Test func aStalledReaderKeepsNothingAfterTheStop() async throws {
        let key = UUID().uuidString
        let size = 1 << 30
        let response = try await executor.stream(
            try StreamServer.request() |> path("bytes") |> query("size", size) |> query("key", key),
            options: StreamOptions(bufferLimit: 1 << 20, spillLimit: 16 << 20))
        var iterator = response.body.makeAsyncIterator()
        _ = try await iterator.next()
        var error: CourierError?
        let growth = await peakGrowth {
            // Long enough for the whole body to arrive, were it kept.
            try? await Task.sleep(for: .seconds(2))
            error = await expectCourierError { while try await iterator.next() != nil {} }
        }
        guard case .slowConsumer = error?.cause else {
            Issue.record("expected slowConsumer, got \(String(describing: error))")
            return
        }
        #expect(growth < 256 << 20, "grew \(growth >> 20) MiB")
        // The transfer was stopped: the server's writes end (the connection is gone).
        try await expectServerStopped(key: key)
    }

    /// Breaking out early on a fast link: the transfer is cancelled, memory stays bounded.
    @Test func breakingOutOnAFastLinkKeepsMemoryBounded() async throws {
        let key = UUID().uuidString
        var seen = 0
        let growth = try await peakGrowth {
            let response = try await executor.stream(
                try StreamServer.request() |> path("bytes") |> query("size", 512 << 20) |> query("key", key))
            for try await chunk in response.body {
                seen += chunk.count
                if seen >= 20 << 20 { break }
            }
        }
        #expect(seen >= 20 << 20)
        #expect(growth < 256 << 20, "grew \(growth >> 20) MiB")
        try await expectServerStopped(key: key, total: 512 << 20)
    }

    /// A stream stopped while the server sends faster than FoundationNetworking reads (1 GiB on
    /// loopback): the reader's stop is immediate and nothing more is kept, but the cancellation
    /// reaches libcurl only when the flood pauses, which may be the end of the body. README,
    /// Known limits ("Stopping a transfer on Linux") says why; the conformance suite holds both
    /// transports to the stop at a pace the client keeps up with.
    @Test func aStreamStoppedDuringAFloodReachesTheServer() async throws {
        let key = UUID().uuidString
        let total = 1 << 30
        let response = try await executor.stream(try StreamServer.request() |> path("bytes") |> query("size", total) |> query("key", key))
        let error = await expectCourierError { for try await _ in response.body.serverSentEvents {} }
        guard case .decodingFailed = error?.cause else {
            Issue.record("expected the line bound to stop the stream, got \(String(describing: error))")
            return
        }
        try await expectServerStopped(key: key, total: total)
    }
}
