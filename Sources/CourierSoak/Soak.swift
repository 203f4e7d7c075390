import CourierConformance
import CourierCore
import CourierResilience
import CourierTesting
import CourierWebSocket
import Foundation

/// Mixed traffic against the loopback test servers for a while, at a fixed concurrency, to show
/// that an executor neither leaks (memory, file descriptors) nor slows down, and fails only
/// where the traffic asks it to.
///
/// Every worker draws its calls from a seeded generator (``SoakOperation`` lists them), so a run
/// makes the same calls in the same order per worker; only their timing differs. Resources are
/// sampled every ``SoakConfiguration/sampleInterval`` while the traffic runs; ``SoakReport``
/// holds the counts, the samples and the checks.
///
/// ```swift
/// let report = await Soak.run(executor, named: "MyTransport", servers: try .fromEnvironment(),
///                             configuration: SoakConfiguration(duration: .seconds(600)))
/// print(report)
/// ```
public enum Soak {
    /// Runs the soak.
    /// - Parameters:
    ///   - executor: The executor under test, with no middleware: the soak adds the token
    ///     refresh it needs.
    ///   - name: The transport's name, for the report.
    ///   - servers: The loopback servers (httpbin and `scripts/stream_server.py`).
    ///   - configuration: How long, how many at once, the seed.
    /// - Returns: What happened.
    public static func run(
        _ executor: any Executor, named name: String, servers: ConformanceServers, configuration: SoakConfiguration
    ) async -> SoakReport {
        let tally = Tally()
        let generation = Tally.TokenGeneration()
        let auth = AuthRefreshMiddleware(
            origins: [servers.stream], credential: "t0", maxRefreshes: Int.max, window: .seconds(1)
        ) { _ in "t\(generation.increment())" }
        let context = Context(
            plain: executor, authenticated: executor.with(auth), auth: auth, servers: servers,
            scratch: configuration.scratchDirectory, tally: tally)
        // WebSockets only where the transport upgrades connections and a peer listens.
        let upgrades = executor.exchange.transport is any UpgradesConnections && servers.webSocket != nil
        let operations = SoakOperation.allCases.filter { upgrades || !$0.needsWebSocket }
        try? FileManager.default.createDirectory(at: configuration.scratchDirectory, withIntermediateDirectories: true)
        let clock = ContinuousClock()
        let start = clock.now
        let end = start + configuration.duration
        var samples: [ProcessSample] = [.current(elapsed: 0, completed: 0)]
        await withTaskGroup(of: [ProcessSample].self) { group in
            for worker in 0..<configuration.concurrency {
                group.addTask {
                    let random = RandomSource.seeded(configuration.seed &+ UInt64(worker))
                    var iteration = 0
                    while clock.now < end {
                        var operation = SoakOperation.random(using: random, among: operations)
                        if let only = configuration.only { operation = only }
                        let started = clock.now
                        await context.perform(operation, worker: worker, iteration: iteration, random: random)
                        tally.record(operation, at: (clock.now - start).seconds, took: (clock.now - started).seconds)
                        iteration += 1
                    }
                    return []
                }
            }
            group.addTask {
                // Every second: the growth check compares medians of many samples, since one
                // sample can catch a dozen 1 MiB bodies in flight; the report shows every tenth.
                var taken: [ProcessSample] = []
                var next = start + .seconds(1)
                while next <= end {
                    try? await clock.sleep(until: next)
                    taken.append(.current(elapsed: (clock.now - start).seconds, completed: tally.completedCount))
                    next += .seconds(1)
                }
                return taken
            }
            for await taken in group { samples += taken }
        }
        try? FileManager.default.removeItem(at: configuration.scratchDirectory)
        var report = SoakReport(
            transport: name, configuration: configuration, completed: tally.completed, injected: tally.injected,
            unexpected: tally.unexpected, examples: tally.examples, samples: samples.sorted { $0.elapsed < $1.elapsed },
            completionsPerSecond: tally.completionsPerSecond)
        report.notes = tally.notes
        return report
    }
}

/// How a soak runs.
public struct SoakConfiguration: Sendable {
    /// How long the traffic runs.
    public var duration: Duration
    /// How many calls are in flight at once.
    public var concurrency: Int
    /// The seed each worker's generator starts from (plus the worker's number).
    public var seed: UInt64
    /// How often the report shows memory and file descriptors (they are sampled every second).
    public var sampleInterval: Duration
    /// The time before the resource baseline is taken (pools fill, caches warm).
    public var warmUp: Duration
    /// Where downloads go; removed at the end.
    public var scratchDirectory: URL
    /// One operation instead of the mix, to find which one a problem comes with.
    public var only: SoakOperation?

    /// Creates a configuration.
    /// - Parameters:
    ///   - duration: How long the traffic runs; 10 minutes by default.
    ///   - concurrency: Calls in flight at once; 64 by default.
    ///   - seed: The seed; fixed by default, so runs are comparable.
    ///   - sampleInterval: How often resources are sampled; 10 s by default.
    ///   - warmUp: The time before the baseline; a tenth of the duration, at least 20 s, by default.
    ///   - scratchDirectory: Where downloads go; a new temporary directory by default.
    public init(
        duration: Duration = .seconds(600), concurrency: Int = 64, seed: UInt64 = 0x00C0_FFEE, sampleInterval: Duration = .seconds(10),
        warmUp: Duration? = nil, scratchDirectory: URL? = nil
    ) {
        self.duration = duration
        self.concurrency = max(1, concurrency)
        self.seed = seed
        self.sampleInterval = sampleInterval
        self.warmUp = warmUp ?? max(.seconds(20), duration / 10)
        self.scratchDirectory =
            scratchDirectory ?? FileManager.default.temporaryDirectory.appendingPathComponent("courier-soak-\(UUID().uuidString)")
    }
}

extension Duration {
    fileprivate var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

/// What the workers share.
private struct Context: Sendable {
    let plain: any Executor
    let authenticated: any Executor
    let auth: AuthRefreshMiddleware
    let servers: ConformanceServers
    let scratch: URL
    let tally: Tally
    /// Tells this run's server-side keys from another run's.
    let run = UUID().uuidString
    /// The WebSocket peer that compresses (`scripts/websocket_server.py`'s third port), when
    /// given: every other WebSocket goes there with permessage-deflate.
    let compressingPeer = ProcessInfo.processInfo.environment["COURIER_WEBSOCKET_DEFLATE_URL"].flatMap { $0.isEmpty ? nil : $0 }

    func perform(_ operation: SoakOperation, worker: Int, iteration: Int, random: RandomSource) async {
        do {
            try await run(operation, worker: worker, iteration: iteration, random: random)
        } catch let error as CourierError where operation.injected.contains(error.errorType) {
            tally.fail(operation, injected: error.errorType)
        } catch let error as CourierError {
            tally.fail(operation, unexpected: error.errorType, example: "\(operation): \(error)")
        } catch {
            tally.fail(operation, unexpected: "\(type(of: error))", example: "\(operation): \(error)")
        }
    }

    private func run(_ operation: SoakOperation, worker: Int, iteration: Int, random: RandomSource) async throws {
        let stream = servers.stream
        switch operation {
        case .small, .large:
            let size = operation == .small ? 100 : 1 << 20
            let response = try await plain.send(.get |> url("\(stream)/file?size=\(size)"))
            try expect(response.status == 200 && response.body.count == size, "\(size) bytes, got \(response.status) with \(response.body.count)")
        case .eventsLeftEarly:
            let response = try await plain.stream(.get |> url("\(stream)/sse?count=50"))
            var seen = 0
            for try await _ in response.body.serverSentEvents {
                seen += 1
                if seen == 3 { break }
            }
            try expect(seen == 3, "3 events, got \(seen)")
        case .downloadCutAndResumed:
            let file = scratch.appendingPathComponent("download-\(worker).bin")
            let size = 256 << 10
            let cut = 1 + Int(random.next() % UInt64(size - 1))
            let resource = "\(stream)/file?size=\(size)&etag=w\(worker)i\(iteration)"
            defer { try? FileManager.default.removeItem(at: file) }
            do {
                _ = try await plain.download(.get |> url("\(resource)&cut=\(cut)"), to: file)
                throw SoakFailure("a cut download succeeded")
            } catch let error as CourierError where error.errorType == "truncatedBody" {
                tally.fail(operation, injected: error.errorType)
            }
            let download = try await plain.download(.get |> url(resource), to: file)
            try expect(download.size == Int64(size) && download.resumedFrom > 0 && download.resumedFrom <= Int64(cut), "resumed from at most \(cut) to \(size), got \(download.resumedFrom) to \(download.size)")
            // Byte i of the server's file is i % 251: the resumed file is the file, spliced right.
            let written = try Data(contentsOf: file)
            try expect(written.enumerated().allSatisfy { $0.element == UInt8($0.offset % 251) }, "a resumed file that differs from the server's")
            if download.resumedFrom < Int64(cut) { tally.note(operation, "kept fewer bytes than arrived before the cut") }
        case .upload:
            let length = (16 << 10) + Int(random.next() % UInt64(496 << 10))
            let body = Data(repeating: UInt8(truncatingIfNeeded: iteration), count: length)
            let response = try await plain.send(Request.post |> url("\(stream)/upload") |> CourierCore.body(body, contentType: .octetStream))
            let echoed = try JSONSerialization.jsonObject(with: response.body) as? [String: Any]
            try expect(response.status == 200 && echoed?["length"] as? Int == length, "\(length) bytes uploaded, server saw \(String(describing: echoed?["length"]))")
        case .cancelled:
            let delay = Duration.milliseconds(Int64(random.next() % 200))
            let call = Task { try await plain.send(.get |> url("\(stream)/bytes?size=\(4 << 20)&block=65536&pace=20")) }
            try? await Task.sleep(for: delay)
            call.cancel()
            let response = try await call.value
            try expect(response.body.count == 4 << 20, "the whole body or a cancellation")
        case .timedOut:
            // A key of this run's own: the server keeps the gates of earlier runs open.
            let key = "soak-\(run)-\(worker)-\(iteration)"
            let outcome: Result<Response, CourierError>
            do {
                outcome = .success(try await plain.send(.get |> url("\(stream)/gated?key=\(key)&size=2000") |> deadline(0.3)))
            } catch {
                outcome = .failure(error)
            }
            // The server's thread waits at the gate: opened here, by this worker (a call of its
            // own left running per timeout would pile up without bound and look like a leak).
            _ = try? await plain.send(.get |> url("\(stream)/open?key=\(key)"))
            let response = try outcome.get()
            throw SoakFailure("a stalled body arrived whole (\(response.body.count) bytes)")
        case .redirected:
            let response = try await plain.send(.get |> url("\(servers.httpbin)/redirect/3"))
            try expect(response.status == 200 && response.url?.path == "/get", "200 from /get, got \(response.status) from \(response.url?.path ?? "?")")
        case .refreshed:
            let current = Int(auth.currentCredential?.dropFirst() ?? "0") ?? 0
            let response = try await authenticated.send(.get |> url("\(stream)/auth?min=\(current + 1)"))
            try expect(response.status == 200, "200 after a refresh, got \(response.status)")
        case .webSocket:
            try await echoes(iteration: iteration, random: random)
        case .webSocketCancelled:
            try await floodCancelled(random: random)
        }
    }

    /// Eight echoes of 1 byte to 64 KiB, text and binary, on a socket of its own (compressed every
    /// other time when the compressing peer is given), then the client's closing handshake.
    private func echoes(iteration: Int, random: RandomSource) async throws {
        var options = WebSocketOptions()
        var peer = servers.webSocket
        if let compressingPeer, iteration % 2 == 1 {
            peer = compressingPeer
            // The context taken over every other time: the deflater's memory of what it sent
            // lives as long as the socket.
            options.compression = WebSocketCompression(clientNoContextTakeover: iteration % 4 == 1)
        }
        guard let peer else { throw SoakFailure("no WebSocket peer") }
        let socket = try await plain.webSocket(.get |> url(peer + "/echo") |> timeout(30), options: options)
        try expect(options.compression == nil || socket.compression != nil, "the compressing peer declined permessage-deflate")
        var replies = socket.messages.makeAsyncIterator()
        for index in 0..<8 {
            let size = 1 + Int(random.next() % UInt64(64 << 10))
            // Text that compresses (a short alphabet) and binary that does not quite.
            let message: WebSocketMessage =
                index % 2 == 0
                ? .text(String(repeating: "soak é ", count: size / 8 + 1))
                : .binary(Data((0..<size).map { UInt8(truncatingIfNeeded: ($0 &* 31) ^ index) }))
            try await socket.send(message)
            let echo = try await replies.next()
            try expect(echo == message, "an echo of \(echo?.data.count ?? -1) bytes for \(message.data.count)")
        }
        try await socket.close(.normalClosure, reason: "soak")
        let closed = try await socket.closed
        try expect(closed == WebSocketClose(initiator: .client, code: .normalClosure, reason: "soak"), "the close ended as \(closed)")
        try expect(try await replies.next() == nil, "messages after the close")
    }

    /// A socket reading a flood, its reading task cancelled after 1 to 50 messages: the socket
    /// ends at once with a cancellation (the injected failure), and its connection goes.
    private func floodCancelled(random: RandomSource) async throws {
        guard let peer = servers.webSocket else { throw SoakFailure("no WebSocket peer") }
        let socket = try await plain.webSocket(.get |> url(peer + "/flood?count=100000&size=256") |> timeout(30))
        let wanted = 1 + Int(random.next() % 50)
        let (reached, signal) = AsyncStream.makeStream(of: Void.self)
        let reader = Task {
            // However the reading ends (a failure included), the wait below ends with it.
            defer { signal.finish() }
            var seen = 0
            for try await _ in socket.messages {
                seen += 1
                if seen == wanted { signal.finish() }
            }
            return seen
        }
        for await _ in reached {}
        reader.cancel()
        let seen = try await reader.value
        // The flood ran out before the cancel was seen: then the server closed it.
        let closed = try await socket.closed
        throw SoakFailure("a cancelled reader read the flood to its end (\(seen) messages, \(closed))")
    }

    private func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws {
        if !condition { throw SoakFailure(message()) }
    }
}

/// A call that did not do what it should (a wrong answer rather than an error).
private struct SoakFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
