import Foundation

/// The resources a process holds at one moment: resident memory and open file descriptors.
public struct ProcessSample: Sendable, Hashable, Codable {
    /// Seconds since the soak started.
    public var elapsed: Double
    /// Resident memory in bytes (`nil` where the platform does not say).
    public var residentBytes: Int?
    /// Open file descriptors (`nil` where the platform does not say).
    public var openFiles: Int?
    /// Calls completed so far.
    public var completed: Int

    /// This process now: on Linux from `/proc/self/statm` and `/proc/self/fd`; elsewhere, file
    /// descriptors are counted by probing and memory is not read.
    static func current(elapsed: Double, completed: Int) -> ProcessSample {
        ProcessSample(elapsed: elapsed, residentBytes: residentBytes(), openFiles: openFiles(), completed: completed)
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
