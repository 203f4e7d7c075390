import AsyncHTTPClient
import CourierAsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix

// The Playground's tour (Tour.swift, Models.swift and OfflineServer.swift are the Playground's own files, linked
// here) run over AsyncHTTPClient against a real httpbin:
//
//   swift run --package-path Integrations/AsyncHTTPClient CourierAHCPlayground --live http://127.0.0.1:PORT
//
// `scripts/test` runs it against the httpbin it starts.

let arguments = CommandLine.arguments.dropFirst()
guard let flag = arguments.firstIndex(of: "--live"), arguments.index(after: flag) < arguments.endIndex else {
    FileHandle.standardError.write(Data("usage: CourierAHCPlayground --live URL (an httpbin, for example on loopback)\n".utf8))
    exit(2)
}
let base = arguments[arguments.index(after: flag)]
print("Courier tour over AsyncHTTPClient against \(base)")
let client = HTTPClient(eventLoopGroup: .singletonMultiThreadedEventLoopGroup, configuration: AsyncHTTPClientExecutor.clientConfiguration())
var failed = false
do {
    let tour = Tour(executor: try AsyncHTTPClientExecutor(client: client), base: base, recorder: nil)
    try await tour.run()
    print("\nTour complete.")
} catch {
    FileHandle.standardError.write(Data("\nTour failed: \(error)\n".utf8))
    failed = true
}
do { try await client.shutdown().get() } catch { FileHandle.standardError.write(Data("shutting the client down: \(error)\n".utf8)) }
exit(failed ? 1 : 0)
