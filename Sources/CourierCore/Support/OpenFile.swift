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

/// A file open for reading or writing through its descriptor: what the core needs of
/// `FileHandle`, which FoundationEssentials does not have. Closed by ``close()`` or when the
/// last reference goes; not shared between threads (its owners keep it behind a lock or in one
/// function).
package final class OpenFile {
    private var descriptor: Int32

    /// Takes ownership of an open descriptor.
    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// Opens `path` for reading (following a symbolic link, as opening a file to read does).
    /// - Throws: `POSIXError` with the reason the system gave.
    static func reading(_ path: String) throws(POSIXError) -> OpenFile {
        let descriptor = retryingInterrupts { open(path, O_RDONLY | O_CLOEXEC) }
        guard descriptor >= 0 else { throw Self.lastError() }
        return OpenFile(descriptor: descriptor)
    }

    deinit { close() }

    /// Up to `count` bytes from where the last read ended; empty at the end of the file.
    func read(upTo count: Int) throws(POSIXError) -> Data {
        guard descriptor >= 0 else { throw POSIXError(.EBADF) }
        var data = Data(count: max(0, count))
        let read = data.withUnsafeMutableBytes { raw in
            Self.retryingInterrupts { systemRead(descriptor, raw.baseAddress, raw.count) }
        }
        guard read >= 0 else { throw Self.lastError() }
        data.count = read
        return data
    }

    /// Writes all of `data`.
    func write(_ data: Data) throws(POSIXError) {
        guard descriptor >= 0 else { throw POSIXError(.EBADF) }
        if let failed = Self.write(data, to: descriptor) { throw POSIXError(POSIXErrorCode(rawValue: failed) ?? .EIO) }
    }

    /// Writes all of `data` to an open descriptor (one a caller keeps open itself); returns the
    /// `errno` of a failure, or `nil`.
    static func write(_ data: Data, to descriptor: Int32) -> Int32? {
        data.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return nil }
            var done = 0
            while done < raw.count {
                let count = retryingInterrupts { systemWrite(descriptor, base + done, raw.count - done) }
                guard count >= 0 else { return errno }
                done += count
            }
            return nil
        }
    }

    /// Closes the file; later reads and writes fail. Closing twice does nothing.
    func close() {
        guard descriptor >= 0 else { return }
        _ = systemClose(descriptor)
        descriptor = -1
    }

    /// The size of the file at `path` (following a symbolic link), or `nil` when there is none.
    package static func size(atPath path: String) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int64(info.st_size)
    }

    /// Whether there is a directory at `path` (following a symbolic link).
    static func isDirectory(atPath path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & mode_t(S_IFMT) == mode_t(S_IFDIR)
    }

    private static func lastError() -> POSIXError {
        POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
    }

    private static func retryingInterrupts<Result: BinaryInteger>(_ call: () -> Result) -> Result {
        while true {
            let result = call()
            if result < 0, errno == EINTR { continue }
            return result
        }
    }
}

private func systemRead(_ file: Int32, _ bytes: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(file, bytes, count)
}

private func systemWrite(_ file: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(file, bytes, count)
}

private func systemClose(_ file: Int32) -> Int32 {
    close(file)
}
