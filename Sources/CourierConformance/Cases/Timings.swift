import CourierCore
import CourierResilience
import CourierTesting
import Foundation

extension ConformanceSuite {
    /// Per-hop timings: whatever a transport reports is in the order it happened, the head and
    /// the body's end are always there, and a reused connection is not said to be connected again.
    static let timings: [ConformanceCase] = [
        ConformanceCase("timings: a hop's phases are in order, its head and body end are marked, a reused connection opens nothing") { context in
            let executor = context.executor().recordingTimings()
            var seen: [HopTimings] = []
            for _ in 0..<2 {
                let response = try await executor.stream(context.httpbin() |> path("bytes", 2048))
                let timings = try response.timings ?? { throw context.failure("no timings recorded") }()
                let body = try await response.body.collect(upTo: 1 << 20)
                try context.expect(body.count == 2048, "read \(body.count) bytes")
                seen.append(response.timings ?? timings)
            }
            for (index, timings) in seen.enumerated() {
                let hop = "hop \(index + 1) (\(timings))"
                guard let firstByte = timings.firstByte, let ended = timings.bodyEnded else {
                    throw context.failure("\(hop): no first byte or body end")
                }
                try context.expect(ended >= firstByte, "\(hop): the body ended before the head came")
                let phases = HopTimings.Phase.allCases.compactMap { timings[$0] }
                let setUp = phases.map(\.end).max() ?? .zero
                if let started = timings.requestStarted {
                    try context.expect(setUp <= started, "\(hop): a connection phase ended after the request began")
                    try context.expect(started <= firstByte, "\(hop): the head came before the request began")
                    if let sent = timings.requestSent { try context.expect(started <= sent, "\(hop): sent before it began") }
                }
                try context.expect(setUp <= firstByte, "\(hop): a connection phase ended after the head came")
                if let dns = timings.dns, let connect = timings.connect {
                    try context.expect(dns.end <= connect.end, "\(hop): connected before the name was resolved")
                }
                if let connect = timings.connect, let tls = timings.tls {
                    try context.expect(connect.end <= tls.end, "\(hop): TLS ended before the connection was open")
                }
                if timings.connection == .reused {
                    try context.expect(timings.dns == nil && timings.connect == nil && timings.tls == nil, "\(hop): a reused connection was opened again")
                }
            }
            if seen[0].connection != nil {
                try context.expect(seen[1].connection == .reused, "the second hop to the same origin did not reuse the connection: \(seen[1])")
            }
        }
    ]
}
