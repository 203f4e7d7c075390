import AsyncHTTPClient
import CourierCore
import CourierAsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix

// Sends one GET through AsyncHTTPClientExecutor and prints what came back, for a test that runs
// it as a child process: a response head a hostile server sends can make AsyncHTTPClient trap
// (see the Known limits article), which a test process must not do itself.
//
//   CourierAHCHeadProbe URL
//
// Prints `response STATUS BYTES` or `error ERRORTYPE: SUMMARY` and exits 0; a trap ends the
// process with a signal instead, which is what the test looks for.

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: CourierAHCHeadProbe URL\n".utf8))
    exit(2)
}
let client = HTTPClient(eventLoopGroup: .singletonMultiThreadedEventLoopGroup, configuration: AsyncHTTPClientExecutor.clientConfiguration())
do {
    let executor = try AsyncHTTPClientExecutor(client: client)
    let response = try await executor.send(.get |> url(CommandLine.arguments[1]) |> deadline(10))
    print("response \(response.status) \(response.body.count)")
} catch let error as CourierError {
    print("error \(error.errorType): \(error.summary)")
} catch {
    print("error \(error)")
}
try? await client.shutdown().get()
exit(0)
