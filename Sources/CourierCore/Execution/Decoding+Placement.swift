#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension Resource {
    /// Bodies at least this large are decoded on the global concurrent executor when the calling
    /// task prefers another task executor: 64 KiB.
    static var largeBody: Int { 64 << 10 }

    /// Decodes `response`, away from the task's preferred executor when the body is large.
    ///
    /// A task may prefer a task executor that also runs I/O (a SwiftNIO event loop, where
    /// CourierNIO's calls cost no thread hand-off): decoding a large body there would hold up
    /// every connection on that loop for as long as it takes (tens of milliseconds for a
    /// megabyte of JSON). Such a body is decoded on the global concurrent executor instead, and
    /// the task goes back to its executor afterwards. A task without a preference decodes where
    /// it runs. (Callers decode a body under ``largeBody`` at once, without this call.)
    func decodeAwayFromIO(_ response: Response) async throws(CourierError) -> Value {
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *),
            withUnsafeCurrentTask(body: { $0?.unownedTaskExecutor != nil })
        {
            return try await withTaskExecutorPreference(globalConcurrentExecutor) { () throws(CourierError) -> Value in
                try decode(response)
            }
        }
        return try decode(response)
    }
}
