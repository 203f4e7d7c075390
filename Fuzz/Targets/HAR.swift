// fuzz: seeded-runs 30000
@testable import CourierCore
@testable import CourierTesting
import Foundation

/// HAR files read for replay (a recording, a browser's export). Rules checked beyond "no crash":
/// - reading fails only with `CourierError`;
/// - an archive that reads writes back (or fails with `CourierError`), and what it writes reads
///   back to the same archive;
/// - replaying every entry answers with its recorded status or fails with `CourierError`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: bytes, count: count)
    let har: HAR
    do {
        har = try withinBudget("HAR(data:)") { Result { () throws(CourierError) in try HAR(data: data) } }.get()
    } catch {
        return 0
    }
    if let written = try? har.jsonData() {
        guard let again = try? HAR(data: written) else { fail("an archive Courier wrote does not read back") }
        require(again == har, "an archive changed on its way through a file")
    }
    let replay = HARReplayExecutor(har)
    for entry in har.log.entries.prefix(4) {
        let request = Request(method: HTTPMethod(rawValue: entry.request.method)) |> url(entry.request.url)
        guard (try? request.validate()) != nil else { continue }
        switch wait({ try await replay.execute(request, options: StreamOptions()) }) {
        case .success(let response):
            // The first entry the request matches answers: maybe an earlier one with the same key.
            let recorded = har.log.entries.map(\.response.status)
            require(recorded.contains(response.status), "replayed a status that was never recorded")
        case .failure(let error):
            require(error is CourierError, "replay failed with \(type(of: error))")
        }
    }
    return 0
}

/// Runs `operation` on the concurrency pool and waits for it on this thread (libFuzzer's own,
/// not a pool thread, so blocking it starves nothing).
private func wait<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) -> Result<T, any Error> {
    let done = DispatchSemaphore(value: 0)
    let box = Box<T>()
    Task {
        do { box.result = .success(try await operation()) } catch { box.result = .failure(error) }
        done.signal()
    }
    done.wait()
    guard let result = box.result else { fail("the task ended without a result") }
    return result
}

private final class Box<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
}
