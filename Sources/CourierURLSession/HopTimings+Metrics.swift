import CourierCore
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension HopTimings.Recorder {
    /// Records what URLSession measured of a transaction: its dates, moved onto the monotonic
    /// clock by their distance from now.
    func record(_ metrics: URLSessionTaskTransactionMetrics) {
        let now = ContinuousClock.now
        let wallNow = Date()
        func instant(_ date: Date?) -> ContinuousClock.Instant? {
            date.map { now - .seconds(wallNow.timeIntervalSince($0)) }
        }
        let phases: [(HopTimings.Phase, Date?, Date?)] = [
            (.dns, metrics.domainLookupStartDate, metrics.domainLookupEndDate),
            // URLSession's connect includes the TLS handshake; Courier's ends where TLS begins.
            (.connect, metrics.connectStartDate, metrics.secureConnectionStartDate ?? metrics.connectEndDate),
            (.tls, metrics.secureConnectionStartDate, metrics.secureConnectionEndDate),
        ]
        for (phase, start, end) in phases {
            guard let start = instant(start), let end = instant(end) else { continue }
            begin(phase, at: start)
            self.end(phase, at: end)
        }
        if let started = instant(metrics.requestStartDate) { mark(.requestStarted, at: started) }
        if let sent = instant(metrics.requestEndDate) { mark(.requestSent, at: sent) }
        let use: HopTimings.Connection? = metrics.fetchStartDate == nil ? nil : metrics.isReusedConnection ? .reused : .new
        #if canImport(Darwin)
            let address = metrics.remoteAddress.map { host -> String in
                let shown = host.contains(":") ? "[\(host)]" : host
                return metrics.remotePort.map { "\(shown):\($0)" } ?? shown
            }
        #else
            let address: String? = nil
        #endif
        connection(use, protocol: metrics.networkProtocolName, remoteAddress: address)
    }
}
