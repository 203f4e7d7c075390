import Foundation

/// The resources a process holds at one moment: resident memory, the heap's bytes in use and
/// open file descriptors.
public struct ProcessSample: Sendable, Hashable, Codable {
    /// Seconds since the soak started.
    public var elapsed: Double
    /// Resident memory in bytes (`nil` where the platform does not say).
    public var residentBytes: Int?
    /// Bytes the C allocator has handed out and not had back (`nil` where it does not say): on
    /// glibc, what `malloc_info` counts as the arenas' size less their free chunks, plus blocks
    /// mapped on their own. Beside ``residentBytes`` it tells a leak (both grow) from an allocator
    /// keeping freed memory (resident memory grows, this does not).
    public var heapInUseBytes: Int?
    /// Open file descriptors (`nil` where the platform does not say).
    public var openFiles: Int?
    /// Threads in the process (`nil` where the platform does not say): each holds a stack that
    /// counts in resident memory and not in the heap.
    public var threads: Int?
    /// Calls completed so far.
    public var completed: Int

    /// Creates a sample from its readings.
    public init(elapsed: Double, residentBytes: Int?, heapInUseBytes: Int? = nil, openFiles: Int?, threads: Int? = nil, completed: Int) {
        self.elapsed = elapsed
        self.residentBytes = residentBytes
        self.heapInUseBytes = heapInUseBytes
        self.openFiles = openFiles
        self.threads = threads
        self.completed = completed
    }

    /// This process now: on Linux from `/proc/self/statm`, glibc's `malloc_info`, `/proc/self/fd`
    /// and `/proc/self/task`; elsewhere, file descriptors are counted by probing and memory and
    /// threads are not read.
    static func current(elapsed: Double, completed: Int) -> ProcessSample {
        ProcessSample(
            elapsed: elapsed, residentBytes: residentBytes(), heapInUseBytes: HeapReading.inUse(), openFiles: openFiles(),
            threads: threads(), completed: completed)
    }

    private static func threads() -> Int? {
        #if os(Linux)
            return (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")).map(\.count)
        #else
            return nil
        #endif
    }

    private static func residentBytes() -> Int? {
        #if os(Linux)
            guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
            let fields = text.split(separator: " ")
            guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
            return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
        #else
            return nil
        #endif
    }

    private static func openFiles() -> Int? {
        #if os(Linux)
            // The listing itself opens one descriptor.
            return (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")).map { $0.count - 1 }
        #else
            let limit = min(Int(getdtablesize()), 4096)
            return (0..<Int32(limit)).filter { fcntl($0, F_GETFD) != -1 }.count
        #endif
    }
}
