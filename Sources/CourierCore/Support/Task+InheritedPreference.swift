extension Task where Failure == any Error {
    /// A task for `operation` that prefers the task executor the current task prefers.
    ///
    /// `Task { }` does not inherit a task executor preference (SE-0417: only child tasks do).
    /// A task the exchange starts for a caller (a hop the idle timer can cancel) would then run
    /// on the global concurrent executor while its caller runs on, say, a SwiftNIO event loop:
    /// a thread hand-off each way, and a transport that opens its connection on the caller's
    /// loop would open it on another. This one keeps the caller's preference.
    ///
    /// Swift 6.3's runtime can name the preferred executor (`UnownedTaskExecutor.asTaskExecutor()`:
    /// Linux, and Apple platforms from the 26.4 releases); elsewhere the task prefers nothing,
    /// as `Task { }` does.
    @inline(__always)
    static func inheritingPreference(operation: sending @escaping @isolated(any) () async throws -> Success) -> Task {
        #if compiler(>=6.3)
            if #available(macOS 26.4, iOS 26.4, tvOS 26.4, watchOS 26.4, visionOS 26.4, *),
                let preferred = withUnsafeCurrentTask(body: { $0?.unownedTaskExecutor?.asTaskExecutor() })
            {
                return Task(executorPreference: preferred, operation: operation)
            }
        #endif
        return Task(operation: operation)
    }
}
