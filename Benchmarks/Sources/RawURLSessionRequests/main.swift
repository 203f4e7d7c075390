import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// Plain URLSession, no Courier: `RawURLSessionRequests URL COUNT [CONCURRENCY]` makes COUNT GETs
// of URL, CONCURRENCY at a time (16 by default), each on `dataTask(with:completionHandler:)`, and
// prints how many succeeded. It is the baseline for what the platform keeps per request: run it
// under heaptrack (Benchmarks/soak --heaptrack-raw does) and compare with the soak's figures.

let arguments = CommandLine.arguments
guard arguments.count >= 3, let url = URL(string: arguments[1]), let count = Int(arguments[2]), count > 0 else {
    FileHandle.standardError.write(Data("usage: RawURLSessionRequests URL COUNT [CONCURRENCY]\n".utf8))
    exit(2)
}
let concurrency = max(1, min(arguments.count > 3 ? Int(arguments[3]) ?? 16 : 16, 256))
let configuration = URLSessionConfiguration.ephemeral
configuration.urlCache = nil
let session = URLSession(configuration: configuration)

/// One GET, bridged from the completion handler.
func get(_ url: URL) async -> Bool {
    await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
        session.dataTask(with: url) { data, response, error in
            continuation.resume(returning: error == nil && (response as? HTTPURLResponse)?.statusCode == 200 && data != nil)
        }.resume()
    }
}

let succeeded = await withTaskGroup(of: Int.self) { group in
    for worker in 0..<concurrency {
        group.addTask {
            var done = 0
            for _ in stride(from: worker, to: count, by: concurrency) where await get(url) { done += 1 }
            return done
        }
    }
    var total = 0
    for await done in group { total += done }
    return total
}
session.finishTasksAndInvalidate()
print("completed: \(succeeded) of \(count) GETs of \(url.absoluteString) with plain URLSession")
exit(succeeded == count ? 0 : 1)
