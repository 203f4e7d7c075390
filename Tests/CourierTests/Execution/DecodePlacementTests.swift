import Courier
import Dispatch
import Foundation
import Testing

/// A task that prefers a task executor of its own (an event loop, typically, where CourierNIO's
/// calls cost no thread hand-off) gets small bodies decoded where it runs, and large ones (64 KiB
/// and more) decoded on the global concurrent executor, so that a megabyte of JSON never holds
/// up the I/O that shares its executor.
@Suite("Executor: where a body is decoded")
struct DecodePlacementTests {
    /// A task executor on one serial queue, which tells whether code runs on it.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    final class QueueExecutor: TaskExecutor {
        private static let key = DispatchSpecificKey<Bool>()
        private let queue = DispatchQueue(label: "courier.tests.queue-executor")

        init() { queue.setSpecific(key: Self.key, value: true) }

        /// Whether the caller runs on the executor's queue.
        static var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == true }

        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
        }
    }

    @Test func aLargeBodyIsDecodedAwayFromTheTasksPreferredExecutor() async throws {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) else { return }
        let executor = InMemoryExecutor { request in
            .status(200, body: Data(repeating: 0x61, count: request.url?.path == "/large" ? 64 << 10 : (64 << 10) - 1))
        }
        let preferred = QueueExecutor()
        let placements = try await Task(executorPreference: preferred) {
            let small = try await executor.send((.get |> url("http://example.test/small") |> decodeData()).map { _ in QueueExecutor.isCurrent })
            let large = try await executor.send((.get |> url("http://example.test/large") |> decodeData()).map { _ in QueueExecutor.isCurrent })
            let largeWithResponse = try await executor.response(
                for: (.get |> url("http://example.test/large") |> decodeData()).map { _ in QueueExecutor.isCurrent })
            // Back on the preferred executor after a large body's decoding.
            return (small, large, largeWithResponse.value, QueueExecutor.isCurrent)
        }.value
        #expect(placements.0, "a body under 64 KiB is decoded where the task runs")
        #expect(!placements.1, "a 64 KiB body is decoded away from the task's executor")
        #expect(!placements.2, "response(for:) too")
        #expect(placements.3, "the task goes back to its executor")
    }

    @Test func withoutAPreferenceALargeBodyDecodesAsBefore() async throws {
        let executor = InMemoryExecutor { _ in .status(200, body: Data(repeating: 0x61, count: 1 << 20)) }
        let body = try await executor.send(.get |> url("http://example.test/large") |> decodeData())
        #expect(body.count == 1 << 20)
    }
}
