#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Bytes that overflowed a stream's memory buffer, in order, in a temporary file that is unlinked
/// as soon as it is open (nothing is left behind, even after a crash). Positional reads and
/// writes (`pread`/`pwrite`) let the producer write newer bytes while the reader reads older
/// ones; the channel hands out the ranges.
final class SpillFile: Sendable {
    private let descriptor: Int32

    init() {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("courier-stream-\(UUID().uuidString)").path
        let opened = open(path, O_RDWR | O_CREAT | O_EXCL, 0o600)
        descriptor = opened
        if opened >= 0 { unlink(path) }
    }

    deinit { if descriptor >= 0 { close(descriptor) } }

    var isOpen: Bool { descriptor >= 0 }

    /// Writes all of `data` at `offset`; `false` on failure.
    func write(_ data: Data, at offset: UInt64) -> Bool {
        data.withUnsafeBytes { raw -> Bool in
            guard let base = raw.baseAddress else { return true }
            var done = 0
            while done < raw.count {
                let written = pwrite(descriptor, base + done, raw.count - done, off_t(offset) + off_t(done))
                if written < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                done += written
            }
            return true
        }
    }

    /// Reads exactly `count` bytes at `offset`; `nil` on failure.
    func read(_ count: Int, at offset: UInt64) -> Data? {
        var data = Data(count: count)
        let ok = data.withUnsafeMutableBytes { raw -> Bool in
            guard let base = raw.baseAddress else { return true }
            var done = 0
            while done < count {
                let got = pread(descriptor, base + done, count - done, off_t(offset) + off_t(done))
                if got < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                if got == 0 { return false }
                done += got
            }
            return true
        }
        return ok ? data : nil
    }
}

/// Spilled bytes counted against one ceiling: ``shared`` holds every stream of the process
/// (``StreamOptions/processSpillLimit``), so many slow readers at once cannot fill the disk.
package final class SpillBudget: Sendable {
    private let state: Locked<(limit: Int64, used: Int64)>

    /// The budget of every stream in the process; 4 GiB unless changed.
    package static let shared = SpillBudget(limit: 4 << 30)

    init(limit: Int64) {
        state = Locked((max(0, limit), 0))
    }

    /// The ceiling, in bytes.
    var limit: Int64 {
        get { state.withLock { $0.limit } }
        set { state.withLock { $0.limit = max(0, newValue) } }
    }

    /// The spilled bytes not yet read back.
    var used: Int64 { state.withLock { $0.used } }

    /// Takes `count` bytes from the budget; `false` (and nothing taken) when they do not fit.
    func reserve(_ count: Int64) -> Bool {
        state.withLock { state in
            guard state.used + count <= state.limit else { return false }
            state.used += count
            return true
        }
    }

    /// Gives `count` bytes back.
    func release(_ count: Int64) {
        guard count > 0 else { return }
        state.withLock { $0.used = max(0, $0.used - count) }
    }
}
