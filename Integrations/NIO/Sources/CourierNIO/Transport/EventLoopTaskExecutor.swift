import NIOCore

/// A task executor on one of SwiftNIO's event loops: a task that prefers it
/// (`Task(executorPreference:)`, `withTaskExecutorPreference(_:operation:)`) runs its
/// non-isolated code on that loop's thread, so the calls it makes through a ``NIOTransport`` on
/// the same loop cost no thread hand-off: the request is written where the task runs, and the
/// response wakes the task where it arrives.
///
/// For a task that makes many calls in a row (a worker, a feed, a batch of small requests); what it
/// saves is measured in the loop rows of Benchmarks/README.md. The task shares the loop with every
/// connection on it, so keep what it does between calls short: Courier decodes a body of 64 KiB
/// or more on the global concurrent executor, so a large JSON body never stalls the loop's other
/// connections.
///
/// ```swift
/// let transport = try NIOTransport()
/// let executor = NIOExecutor(transport: transport)
/// let worker = Task(executorPreference: transport.taskExecutor()) {
///     for id in 1...100 {
///         _ = try await executor.send(.get |> url("http://inventory/items") |> path(id) |> decode(Item.self))
///     }
/// }
/// ```
///
/// The transport's pool prefers an idle connection on the loop the caller runs on, and opens new
/// ones there. Keep the loop's group running for as long as a task prefers it: a loop that has
/// shut down runs no more jobs (SwiftNIO's process-wide group, the default, never shuts down).
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
public final class EventLoopTaskExecutor: TaskExecutor {
    /// The loop the executor's jobs run on.
    public let eventLoop: any EventLoop

    /// A task executor on `eventLoop`.
    /// - Parameter eventLoop: The loop; a ``NIOTransport`` on a group that holds it uses it.
    public init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// Runs `job` on the loop, after what is queued there already.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

extension NIOTransport {
    /// A task executor on one of the transport's event loops, the next in turn: give each
    /// long-running worker task its own (``EventLoopTaskExecutor``).
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    public func taskExecutor() -> EventLoopTaskExecutor {
        EventLoopTaskExecutor(eventLoopGroup.next())
    }
}
