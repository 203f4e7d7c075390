import CourierCore
import CourierResilience
import CourierTesting
import Foundation

/// Courier's transport guarantees, as ``ConformanceCase``s every executor is held to.
///
/// ``cases`` needs the loopback servers (``ConformanceServers``). An executor that answers from
/// memory or a recording runs the cases that need neither the network nor real time
/// (``cases(meeting:)`` with what it offers) against ``reference()``: the same paths, answered
/// the way httpbin answers them.
public enum ConformanceSuite {
    /// Every case.
    public static let cases: [ConformanceCase] =
        contract + redirects + hops + limits + time + cancellation + integrity + streaming + uploads + uploadBounds + downloads
        + events + cookies + caching + timings + resilience + webSockets

    /// The cases whose requirements `offered` covers.
    /// - Parameter offered: What the executor under test offers.
    /// - Returns: The cases it can run.
    public static func cases(meeting offered: Set<ConformanceCase.Requirement>) -> [ConformanceCase] {
        cases.filter { $0.requirements.isSubset(of: offered) }
    }

    /// The servers ``reference()`` stands in for.
    public static let referenceServers = ConformanceServers(
        httpbin: "http://httpbin.conformance.test", otherOrigin: "http://other.conformance.test",
        hostile: "http://hostile.conformance.test", stream: "http://stream.conformance.test")

    /// An in-memory executor answering the httpbin paths the network-free cases use, the way
    /// httpbin does: `/status/{code}`, `/bytes/{n}`, `/stream-bytes/{n}`, `/basic-auth/{user}/{password}`,
    /// `/delay/{seconds}` and `/drip`; and the gate `scripts/httpbin_wsgi.py` adds
    /// (`/courier/gate`, `/courier/open`, `/courier/writes`), which holds its answer for 60 s
    /// unless opened first.
    /// - Returns: A new executor.
    public static func reference() -> InMemoryExecutor {
        let challenge: HTTPHeaders = ["WWW-Authenticate": #"Basic realm="Fake Realm""#]
        return InMemoryExecutor(routes: [
            .init(.get, "/status/{code}") { _, parameters in
                let code = parameters.int("code") ?? 500
                return .status(code, headers: code == 401 ? challenge : [:])
            },
            .init(.get, "/bytes/{n}") { _, parameters in
                .status(200, headers: ["Content-Type": "application/octet-stream"], body: Data(count: max(0, parameters.int("n") ?? 0)))
            },
            .init(.get, "/stream-bytes/{n}") { request, parameters in
                let total = max(0, parameters.int("n") ?? 0)
                let size = max(1, Int(request.queryItems.first { $0.name == "chunk_size" }?.value ?? "") ?? 10_240)
                let chunks = stride(from: 0, to: total, by: size).map { Data(count: min(size, total - $0)) }
                return .stream(chunks, headers: ["Content-Type": "application/octet-stream"])
            },
            .init(.get, "/basic-auth/{user}/{password}") { request, parameters in
                // As httpbin: 200 for the user and password the path names, a challenge otherwise.
                let expected = "Basic " + Data("\(parameters["user"] ?? ""):\(parameters["password"] ?? "")".utf8).base64EncodedString()
                guard request.headers[.authorization] == expected else { return .status(401, headers: challenge) }
                return .json(["authenticated": "true", "user": parameters["user"] ?? ""])
            },
            .init(.get, "/delay/{seconds}") { _, parameters in
                .status(200).delayed(by: .seconds(min(10, max(0, Double(parameters["seconds"] ?? "") ?? 0))))
            },
            .init(.get, "/courier/gate") { request, _ in
                let key = request.queryItems.first { $0.name == "key" }?.value ?? ""
                ReferenceGates.hold(key)
                guard let head = request.queryItems.first(where: { $0.name == "head" })?.value.flatMap(Int.init) else {
                    return .status(200).delayed(by: ReferenceGates.limit)
                }
                let bytes = Data(repeating: UInt8(ascii: "*"), count: max(0, min(head, 1 << 20)))
                return .stream([bytes, bytes], every: ReferenceGates.limit / 2)
            },
            .init(.get, "/courier/open") { request, _ in
                .json(["was": ReferenceGates.open(request.queryItems.first { $0.name == "key" }?.value ?? "")])
            },
            .init(.get, "/courier/writes") { request, _ in
                let held = ReferenceGates.isHeld(request.queryItems.first { $0.name == "key" }?.value ?? "")
                return .json(ServerWrites(events: held ? [ServerWrites.Event(name: "held", at: 0)] : [], done: false))
            },
            .init(.get, "/drip") { request, _ in
                func number(_ name: String) -> Double? { request.queryItems.first { $0.name == name }?.value.flatMap(Double.init) }
                let count = max(1, Int(number("numbytes") ?? 10))
                let every = (number("duration") ?? 2) / Double(count)
                return .stream(Array(repeating: Data("*".utf8), count: count), every: .seconds(every))
            },
        ])
    }
}

/// The reference executor's gates, shared by every executor ``ConformanceSuite/reference()``
/// makes (a case's call and its watcher use two): when each was first held.
enum ReferenceGates {
    /// How long a gate holds unless opened, as the test server's does.
    static let limit = Duration.seconds(60)
    private static let held = Locked<[String: ContinuousClock.Instant]>([:])

    static func hold(_ key: String) {
        held.withLock { $0[key] = $0[key] ?? .now }
    }

    static func isHeld(_ key: String) -> Bool {
        held.withLock { $0[key] != nil }
    }

    /// `held` when opened before its limit ran out, `released` after, `unknown` for no gate.
    static func open(_ key: String) -> String {
        guard let since = held.withLock({ $0.removeValue(forKey: key) }) else { return "unknown" }
        return ContinuousClock.now - since < limit ? "held" : "released"
    }
}
