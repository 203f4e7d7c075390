import AsyncHTTPClient
import Courier
import CourierAsyncHTTPClient
import CourierConformance
import Foundation
import NIOHTTPCompression
import NIOPosix

/// The client every test borrows, configured the way the executor asks; it lives as long as the
/// test process (a client must be shut down before it is released, and this one never is).
let sharedClient = HTTPClient(
    eventLoopGroup: .singletonMultiThreadedEventLoopGroup, configuration: AsyncHTTPClientExecutor.clientConfiguration())

/// The servers `scripts/test` starts.
func servers() throws -> ConformanceServers { try ConformanceServers.fromEnvironment() }

/// An executor over the shared client.
func makeExecutor(redirects: RedirectPolicy = .follow, maximumResponseSize: Int? = nil) throws -> AsyncHTTPClientExecutor {
    try AsyncHTTPClientExecutor(client: sharedClient, redirects: redirects, maximumResponseSize: maximumResponseSize)
}

/// The resident set size of this process, in bytes (Linux: /proc/self/statm; elsewhere `nil`).
func residentBytes() -> Int? {
    guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
    let fields = statm.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
    return pages * 4096
}
