// Live measurements of Courier on AsyncHTTPClient against raw AsyncHTTPClient (and raw
// URLSession, for context), one measurement per process: `Benchmarks/run` with
// `COURIER_BENCH_ONLY=ahc` builds this in release mode and runs every batch in a fresh process
// against its loopback nginx (Benchmarks/live.py, Benchmarks/README.md).
//
//   CourierAHCBenchmarks --live-row small|noContent|large --variant V --url BASE --concurrency N --total T
//     V: ahc-raw, ahc-courier (the request built once), ahc-raw-built, ahc-courier-built (built
//     for each call, as an app does), ahc-courier-served (built for each call with a 30 s
//     timeout and a 16 MB size limit, as servers configure it), nio-courier, nio-courier-built,
//     nio-courier-served (Courier's own transport, CourierNIO), nio-courier-served-loop (the same
//     from worker tasks on the transport's event loops), urlsession-raw, urlsession-courier
//   CourierAHCBenchmarks --streaming stream-ahc|stream-ahc-raw|stream-nio --address URL
//
//   add --ca FILE (and --http1) for the HTTPS rows: TLS trusting FILE, HTTP/2 by ALPN or HTTP/1.1
//
// Each prints one JSON object: {throughput, cpuPerRequest, requests} or {seconds, bytes, peakMegabytes}.
import AsyncHTTPClient
import Courier
import CourierAsyncHTTPClient
import CourierNIO
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOPosix
import NIOSSL

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

struct Payload: Codable, Sendable {
    var id: Int
    var name: String
}

struct BenchmarkError: Error, CustomStringConvertible {
    var description: String
}

@inline(never) func blackHole<T>(_ value: T) { withExtendedLifetime(value) {} }

/// User plus system CPU time of this process, in seconds (getrusage).
func cpuSeconds() -> Double {
    var usage = rusage()
    #if canImport(Glibc)
        getrusage(RUSAGE_SELF.rawValue, &usage)
    #else
        getrusage(RUSAGE_SELF, &usage)
    #endif
    func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// The peak resident set size of this process in MB (Linux: VmHWM in /proc/self/status).
func peakMegabytes() -> Double {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
        let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "")
    else { return .nan }
    return kilobytes / 1024
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

func printJSON(_ object: [String: Double]) throws {
    let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    print(String(decoding: data, as: UTF8.self))
}

enum Kind: String {
    case small, noContent, large
    var path: String {
        switch self {
        case .small: "small.json"
        case .noContent: "204"
        case .large: "large.json"
        }
    }
}

/// What the raw clients and Courier share: the event loops, and a pool wide enough for
/// concurrency 16 (AsyncHTTPClient's default is 8 connections per host). For the HTTPS rows
/// (`--ca FILE`): the TLS configuration, trusting that certificate only, full verification, and
/// HTTP/1.1 only with `--http1` (HTTP/2 by ALPN otherwise).
func baseConfiguration() -> HTTPClient.Configuration {
    var configuration = HTTPClient.Configuration()
    configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 16
    if let authority = value("--ca") {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .file(authority)
        configuration.tlsConfiguration = tls
        configuration.httpVersion = arguments.contains("--http1") ? .http1Only : .automatic
    }
    return configuration
}

/// Courier's own transport with what the AsyncHTTPClient rows share: 16 connections per host,
/// and for the HTTPS rows the run's certificate trusted alone, HTTP/1.1 only with `--http1`
/// (HTTP/2 by ALPN otherwise).
func nioConfiguration() throws -> NIOTransport.Configuration {
    var configuration = NIOTransport.Configuration(connectionsPerHost: 16)
    if let authority = value("--ca") {
        configuration.tls = TLSOptions(trust: .only([try TLSOptions.Certificate(contentsOf: URL(fileURLWithPath: authority))]))
        configuration.allowsHTTP2 = !arguments.contains("--http1")
    }
    return configuration
}

/// The task executors the batch's workers prefer, one each in turn: empty for tasks on the
/// global concurrent executor (every variant but `nio-courier-served-loop`).
nonisolated(unsafe) var preferredExecutors: [any TaskExecutor] = []

func batch(total: Int, concurrency: Int, _ send: @escaping @Sendable () async throws -> Void) async throws -> (Double, Double) {
    let cpuStart = cpuSeconds()
    let clock = ContinuousClock()
    let start = clock.now
    let executors = preferredExecutors
    try await withThrowingTaskGroup(of: Void.self) { group in
        for worker in 0..<concurrency {
            let share = total / concurrency + (worker < total % concurrency ? 1 : 0)
            if executors.isEmpty {
                group.addTask { for _ in 0..<share { try await send() } }
            } else {
                group.addTask(executorPreference: executors[worker % executors.count]) { for _ in 0..<share { try await send() } }
            }
        }
        try await group.waitForAll()
    }
    return (Double(total) / seconds(clock.now - start), (cpuSeconds() - cpuStart) / Double(total))
}

/// Courier's resources, the same for every executor.
func courierSender(_ kind: Kind, base: String, executor: any Executor) -> @Sendable () async throws -> Void {
    switch kind {
    case .small:
        let resource = Request.get |> baseURL(base) |> path(kind.path) |> decode(Payload.self)
        return { blackHole(try await executor.send(resource)) }
    case .large:
        let resource = Request.get |> baseURL(base) |> path(kind.path) |> decode([Payload].self)
        return { blackHole(try await executor.send(resource)) }
    case .noContent:
        let resource = Request.get |> baseURL(base) |> path(kind.path) |> decodeEmpty()
        return { try await executor.send(resource) }
    }
}

/// Courier as an app calls it: the request and resource built for each call (a base URL, a
/// path, a bearer token, the decoder), not once outside the loop. `served`: as the README tells
/// servers to configure it, a 30 s timeout on each request (the executor then holds a 16 MB size
/// limit, see ``servedExecutor(_:)``), as raw AsyncHTTPClient's `execute(_:timeout:)` and
/// `collect(upTo:)` do.
func courierBuiltSender(_ kind: Kind, base: String, executor: any Executor, served: Bool = false) -> @Sendable () async throws -> Void {
    let token = "benchmark-token"
    let limit = servedLimits(served)
    switch kind {
    case .small:
        return { blackHole(try await executor.send(.get |> baseURL(base) |> path(kind.path) |> bearer(token) |> limit |> decode(Payload.self))) }
    case .large:
        return { blackHole(try await executor.send(.get |> baseURL(base) |> path(kind.path) |> bearer(token) |> limit |> decode([Payload].self))) }
    case .noContent:
        return { try await executor.send(.get |> baseURL(base) |> path(kind.path) |> bearer(token) |> limit |> decodeEmpty()) }
    }
}

/// A 30 s timeout when `served`, nothing otherwise.
func servedLimits(_ served: Bool) -> RequestBuilder {
    if served { return timeout(30) }
    return { request in request }
}

/// `executor` with the size limit servers set: 16 MB, as the raw client's `collect(upTo:)`.
func servedExecutor<E: Executor>(_ executor: E) -> E {
    var executor = executor
    executor.maximumResponseSize = 16 << 20
    return executor
}

/// The hand-written AsyncHTTPClient client: the body collected into one buffer, a status check,
/// and `JSONDecoder` reading the buffer in place. The request is made once, outside the loop, or
/// with `builtEachCall` for each call as an app would: the URL joined from the base and the
/// path, the `Authorization` header added.
func rawAHCSender(_ kind: Kind, base: String, client: HTTPClient, builtEachCall: Bool = false) -> @Sendable () async throws -> Void {
    let prebuilt = HTTPClientRequest(url: base + "/" + kind.path)
    let decoder = JSONDecoder()
    let token = "benchmark-token"
    return {
        var request = prebuilt
        if builtEachCall {
            request = HTTPClientRequest(url: base + "/" + kind.path)
            request.headers.add(name: "Authorization", value: "Bearer " + token)
        }
        let response = try await client.execute(request, timeout: .seconds(60))
        guard (200..<300).contains(response.status.code) else { throw BenchmarkError(description: "status \(response.status)") }
        let body = try await response.body.collect(upTo: 16 << 20)
        switch kind {
        case .small: blackHole(try decoder.decode(Payload.self, from: body))
        case .large: blackHole(try decoder.decode([Payload].self, from: body))
        case .noContent: blackHole(body)
        }
    }
}

/// The hand-written URLSession client, as in Benchmarks/ (`data(for:)`, status check, decoder).
func rawURLSessionSender(_ kind: Kind, base: String, session: URLSession) throws -> @Sendable () async throws -> Void {
    guard let url = URL(string: base + "/" + kind.path) else { throw BenchmarkError(description: "bad URL") }
    let request = URLRequest(url: url)
    let decoder = JSONDecoder()
    return {
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse, (200..<300).contains(http.statusCode) else {
            throw BenchmarkError(description: "unexpected response")
        }
        switch kind {
        case .small: blackHole(try decoder.decode(Payload.self, from: data))
        case .large: blackHole(try decoder.decode([Payload].self, from: data))
        case .noContent: blackHole(data)
        }
    }
}

func liveRow(kind: Kind, variant: String, base: String, concurrency: Int, total: Int) async throws {
    var client: HTTPClient?
    var nioTransport: NIOTransport?
    var keepAlive: [AnyObject] = []
    let send: @Sendable () async throws -> Void
    switch variant {
    case "ahc-raw", "ahc-raw-built":
        let made = HTTPClient(eventLoopGroup: .singletonMultiThreadedEventLoopGroup, configuration: baseConfiguration())
        client = made
        send = rawAHCSender(kind, base: base, client: made, builtEachCall: variant == "ahc-raw-built")
    case "ahc-courier", "ahc-courier-built", "ahc-courier-served":
        let made = HTTPClient(
            eventLoopGroup: .singletonMultiThreadedEventLoopGroup,
            configuration: AsyncHTTPClientExecutor.clientConfiguration(baseConfiguration()))
        client = made
        let executor = try AsyncHTTPClientExecutor(client: made)
        switch variant {
        case "ahc-courier": send = courierSender(kind, base: base, executor: executor)
        case "ahc-courier-built": send = courierBuiltSender(kind, base: base, executor: executor)
        default: send = courierBuiltSender(kind, base: base, executor: servedExecutor(executor), served: true)
        }
    case "nio-courier-served-loop":
        // The served calls from worker tasks on the transport's event loops (each worker its
        // loop in turn), as a worker that makes many calls runs: no thread hand-off per call.
        let transport = try NIOTransport(configuration: nioConfiguration())
        preferredExecutors = (0..<System.coreCount).map { _ in transport.taskExecutor() }
        send = courierBuiltSender(kind, base: base, executor: servedExecutor(NIOExecutor(transport: transport)), served: true)
        nioTransport = transport
    case "nio-courier", "nio-courier-built", "nio-courier-served", "nio-courier-timeout", "nio-courier-limit":
        let transport = try NIOTransport(configuration: nioConfiguration())
        let executor = NIOExecutor(transport: transport)
        switch variant {
        case "nio-courier": send = courierSender(kind, base: base, executor: executor)
        case "nio-courier-built": send = courierBuiltSender(kind, base: base, executor: executor)
        // The two halves of "served", apart: a timeout alone, a size limit alone.
        case "nio-courier-timeout": send = courierBuiltSender(kind, base: base, executor: executor, served: true)
        case "nio-courier-limit": send = courierBuiltSender(kind, base: base, executor: servedExecutor(executor))
        default: send = courierBuiltSender(kind, base: base, executor: servedExecutor(executor), served: true)
        }
        nioTransport = transport
    case "urlsession-raw":
        // Without a URLCache on Linux, as Courier's URLSession transport runs there.
        let configuration = URLSessionConfiguration.ephemeral
        #if canImport(FoundationNetworking)
            configuration.urlCache = nil
        #endif
        let session = URLSession(configuration: configuration)
        keepAlive.append(session)
        send = try rawURLSessionSender(kind, base: base, session: session)
    case "urlsession-courier":
        let executor = URLSessionExecutor(configuration: .ephemeral)
        keepAlive.append(executor.transport)
        send = courierSender(kind, base: base, executor: executor)
    default:
        throw BenchmarkError(description: "unknown variant \(variant)")
    }
    // Warm up: connections, caches, the thread pool.
    _ = try await batch(total: max(32, total / 10), concurrency: concurrency, send)
    let (throughput, cpu) = try await batch(total: total, concurrency: concurrency, send)
    withExtendedLifetime(keepAlive) {}
    try await client?.shutdown()
    await nioTransport?.shutdown()
    try printJSON(["throughput": throughput, "cpuPerRequest": cpu, "requests": Double(total)])
}

func streamRow(kind: String, address: String) async throws {
    let client = HTTPClient(
        eventLoopGroup: .singletonMultiThreadedEventLoopGroup, configuration: AsyncHTTPClientExecutor.clientConfiguration(baseConfiguration()))
    let clock = ContinuousClock()
    let start = clock.now
    var total = 0
    switch kind {
    case "stream-ahc":
        let executor = try AsyncHTTPClientExecutor(client: client)
        let response = try await executor.stream(.get |> url(address))
        for try await chunk in response.body { total += chunk.count }
    case "stream-ahc-raw":
        let response = try await client.execute(HTTPClientRequest(url: address), deadline: .distantFuture)
        for try await buffer in response.body { total += buffer.readableBytes }
    case "stream-nio":
        let transport = try NIOTransport(configuration: nioConfiguration())
        let response = try await NIOExecutor(transport: transport).stream(.get |> url(address))
        for try await chunk in response.body { total += chunk.count }
        await transport.shutdown()
    default:
        throw BenchmarkError(description: "unknown streaming kind \(kind)")
    }
    let elapsed = seconds(clock.now - start)
    try await client.shutdown()
    try printJSON(["seconds": elapsed, "bytes": Double(total), "peakMegabytes": peakMegabytes()])
}

let arguments = CommandLine.arguments
func value(_ name: String) -> String? {
    arguments.firstIndex(of: name).flatMap { arguments.index(after: $0) < arguments.endIndex ? arguments[$0 + 1] : nil }
}

do {
    if let kind = value("--live-row").flatMap(Kind.init(rawValue:)), let variant = value("--variant"), let base = value("--url") {
        try await liveRow(
            kind: kind, variant: variant, base: base, concurrency: value("--concurrency").flatMap(Int.init) ?? 1,
            total: value("--total").flatMap(Int.init) ?? 1000)
    } else if let kind = value("--streaming"), let address = value("--address") {
        try await streamRow(kind: kind, address: address)
    } else {
        print("usage: CourierAHCBenchmarks --live-row KIND --variant V --url BASE [--concurrency N] [--total T]")
        print("       CourierAHCBenchmarks --streaming stream-ahc|stream-ahc-raw --address URL")
        exit(2)
    }
} catch {
    FileHandle.standardError.write(Data("CourierAHCBenchmarks: \(error)\n".utf8))
    exit(1)
}
