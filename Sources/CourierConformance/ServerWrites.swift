import CourierCore
import CourierResilience
import CourierTesting
import Foundation

/// When a test server wrote a response, by its own clock: what `scripts/httpbin_wsgi.py` records
/// for a request whose query has `courier-writes=KEY`, read back at `/courier/writes?key=KEY`.
///
/// A case that checks that a timer does *not* fire (an idle timeout across a drip) cannot tell
/// from its own clock whether the client fired early or the server went quiet: a server that
/// queues the request behind others, or holds bytes back, looks the same from the client. The
/// server's record tells them apart.
struct ServerWrites: Codable, Sendable, Equatable {
    /// One thing the server did, at a time on its monotonic clock.
    struct Event: Codable, Sendable, Equatable {
        /// `arrived` (before the request waits for a worker thread), `started` (the app has it),
        /// `wrote` (a chunk went to the connection), `end` (the body ended) or `closed` (the
        /// client went away first).
        var name: String
        /// Seconds on the server's monotonic clock.
        var at: Double
    }

    var events: [Event]
    /// Whether the response is over, so nothing more will be recorded.
    var done: Bool

    /// The longest time the server went without doing anything the client could see: between
    /// the request's arrival, each write and the end, in seconds. `nil` with no record.
    var longestSilence: Double? {
        let times = events.map(\.at).sorted()
        guard let first = times.first else { return nil }
        var longest = 0.0
        var previous = first
        for time in times.dropFirst() {
            longest = max(longest, time - previous)
            previous = time
        }
        return longest
    }

    /// Whose a timeout was, by the record: the server's when it was ever silent for `fraction` of
    /// the timeout or longer (the drips these cases use write far more often, so only a server
    /// that held back is that silent); the client's (or its machine's) otherwise; unknown
    /// without a record (a server without `/courier/writes`).
    enum Verdict: Equatable, Sendable {
        case server(silence: Double)
        case client(longestSilence: Double)
        case unknown
    }

    /// The verdict on a timeout of `timeout` seconds.
    func verdict(timeout: Double, fraction: Double = 0.8) -> Verdict {
        guard let silence = longestSilence, events.contains(where: { $0.name == "wrote" || $0.name == "end" }) else {
            return .unknown
        }
        return silence >= fraction * timeout ? .server(silence: silence) : .client(longestSilence: silence)
    }
}

extension ConformanceContext {
    /// Runs `body` on `request`, which must not time out, judging each timeout by the server's
    /// record of when it wrote (``ServerWrites``): a timeout while the server was silent for about
    /// the timeout is the server's and the call is tried again (up to ten tries in all); a timeout
    /// while it kept writing counts against the transport, or against a stall of this machine
    /// (two busy cores, ThreadSanitizer), which does not repeat: the third such timeout fails the
    /// case. A server without the record counts every timeout.
    func withoutServerSilence<Result>(
        _ what: String, _ request: Request, line: Int = #line, _ body: (Request) async throws -> Result
    ) async throws -> Result {
        guard let timeout = request.effectiveTimeout else { throw failure("\(what): the request has no timeout to judge", line: line) }
        var counted: [String] = []
        var voided: [String] = []
        while true {
            let key = "conformance-\(UUID().uuidString)"
            do {
                return try await body(request |> query("courier-writes", key))
            } catch let error as CourierError where error.isTimeout {
                switch try await writes(key).verdict(timeout: timeout) {
                case .server(let silence):
                    voided.append(String(format: "%.2f s", silence))
                    if voided.count == 10 {
                        throw failure(
                            "\(what): the server was silent for about the \(timeout) s timeout on ten tries (longest silences \(voided.joined(separator: ", "))), so the case cannot tell; a server problem, not the transport's",
                            line: line)
                    }
                case .client(let silence):
                    counted.append(String(format: "the server's longest silence %.2f s", silence))
                case .unknown:
                    counted.append("no record of the server's writes")
                }
                if counted.count == 3 {
                    throw failure("\(what): timed out three times while the server kept writing (\(counted.joined(separator: "; "))): \(error)", line: line)
                }
            }
        }
    }

    /// The server's record of its writes under `key`, once the response is over there (it ends
    /// whether or not the client stayed); an empty record from a server that keeps none.
    private func writes(_ key: String) async throws -> ServerWrites {
        let executor = executor()
        while true {
            let response = try await executor.send(httpbin() |> path("courier", "writes") |> query("key", key))
            guard response.status == 200, let writes = try? JSONDecoder().decode(ServerWrites.self, from: response.body) else {
                return ServerWrites(events: [], done: true)
            }
            if writes.done { return writes }
            try await Task.sleep(for: .milliseconds(50))
        }
    }
}
