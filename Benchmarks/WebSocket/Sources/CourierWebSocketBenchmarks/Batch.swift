import Foundation

#if canImport(Glibc)
    import Glibc
#endif

struct BenchmarkError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// What a round trip sends: the same bytes for every client, in each client's own type.
struct Payload: Sendable {
    enum Form: Sendable { case text(String), binary([UInt8]) }
    let form: Form
    let size: Int

    init(_ kind: Kind) {
        switch kind {
        case .small:
            let text = #"{"id":42,"name":"a small message","tags":["echo","benchmark"],"padding":"#
            let padded = text + String(repeating: "x", count: 100 - text.utf8.count - 2) + "\"}"
            form = .text(padded)
            size = padded.utf8.count
        case .large:
            var generator = SystemRandomNumberGenerator()
            form = .binary((0..<(1 << 20)).map { _ in UInt8.random(in: 0...255, using: &generator) })
            size = 1 << 20
        case .json, .json1k:
            // 16 KiB less a little; 1 KiB and a little, as Courier compresses from 1,024 bytes.
            let least = kind == .json ? (16 << 10) - 64 : 1 << 10
            var lines = "["
            var id = 0
            while lines.utf8.count < least {
                lines += #"{"id":\#(id),"name":"user \#(id % 97)","active":\#(id % 3 == 0)},"#
                id += 1
            }
            lines += #"{"id":-1}]"#
            form = .text(lines)
            size = lines.utf8.count
        }
    }

    /// Round trips each socket makes before the clock starts.
    var warmUp: Int { size > 1 << 16 ? 3 : 50 }
}

enum Kind: String { case small, large, json, json1k }

/// The work of one batch: so many sockets, so many round trips each.
struct Batch: Sendable {
    let sockets: Int
    let roundTrips: Int
    let payload: Payload
}

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

/// The start and the finish of a batch: the clock and the CPU count start when the last socket is
/// warm and stop when the last socket is done, whatever client runs them.
actor Race {
    struct Result: Sendable {
        var seconds: Double
        var cpuSeconds: Double
    }

    private let sockets: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []
    private var finished = 0
    private var start: (ContinuousClock.Instant, Double)?
    private var result: Result?

    init(sockets: Int) { self.sockets = sockets }

    /// Suspends until every socket is ready; the last to arrive starts the clock.
    func ready() async {
        if waiting.count + 1 == sockets {
            start = (ContinuousClock.now, cpuSeconds())
            for continuation in waiting { continuation.resume() }
            waiting = []
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    /// A socket is done; the last stops the clock.
    func done() {
        finished += 1
        guard finished == sockets, let (instant, cpu) = start else { return }
        let elapsed = ContinuousClock.now - instant
        result = Result(
            seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18,
            cpuSeconds: cpuSeconds() - cpu)
    }

    func outcome() throws -> Result {
        guard let result else { throw BenchmarkError("the batch did not finish") }
        return result
    }
}
