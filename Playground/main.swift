import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// `swift run Playground` tours Courier against an in-memory server (offline).
// `swift run Playground --live http://127.0.0.1:8080` runs the same tour against a real httpbin.

let arguments = CommandLine.arguments.dropFirst()
let tour: Tour
if let flag = arguments.firstIndex(of: "--live") {
    guard arguments.index(after: flag) < arguments.endIndex else {
        FileHandle.standardError.write(Data("usage: Playground [--live URL]\n".utf8))
        exit(2)
    }
    let base = arguments[arguments.index(after: flag)]
    print("Courier tour against \(base)")
    let live = URLSessionExecutor(configuration: .ephemeral)
    tour = Tour(executor: live, base: base, recorder: nil)
} else {
    print("Courier tour against an in-memory server (pass --live URL for a real one)")
    let server = OfflineServer.executor()
    tour = Tour(executor: server, base: "https://httpbin.example", recorder: server)
}

do {
    try await tour.run()
    print("\nTour complete.")
} catch {
    FileHandle.standardError.write(Data("\nTour failed: \(error)\n".utf8))
    exit(1)
}
