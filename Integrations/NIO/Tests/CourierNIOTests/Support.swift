import Courier
import CourierConformance
import CourierNIO
import Foundation

/// The servers `scripts/test` starts.
func servers() throws -> ConformanceServers { try ConformanceServers.fromEnvironment() }

/// The transport every test shares (as an application shares one); it lives as long as the test
/// process.
let sharedTransport = NIOExecutor.shared.transport

/// An executor over the shared transport.
func makeExecutor(redirects: RedirectPolicy = .follow, maximumResponseSize: Int? = nil) -> NIOExecutor {
    NIOExecutor(transport: sharedTransport, redirects: redirects, maximumResponseSize: maximumResponseSize)
}
