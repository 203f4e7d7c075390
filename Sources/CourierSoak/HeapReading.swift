import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// How many bytes the C allocator has handed out and not had back, read from glibc's
/// `malloc_info` (found at run time: `malloc.h` is not part of Swift's Glibc module). Elsewhere,
/// or if the function is missing, there is no reading.
enum HeapReading {
    /// The bytes in use now, or `nil`: also when `malloc` is not glibc's (a sanitizer's, or an
    /// allocator preloaded in its place), whose heap `malloc_info` does not see.
    static func inUse() -> Int? {
        #if canImport(Glibc)
            guard mallocIsGlibcs, let report = mallocInfo() else { return nil }
            return inUse(fromMallocInfo: report)
        #else
            return nil
        #endif
    }

    /// Whether the process's `malloc` is the C library's own: the one every call resolves to is
    /// the one `libc.so.6` defines. ThreadSanitizer, AddressSanitizer, heaptrack and jemalloc put
    /// another in front of it.
    static var mallocIsGlibcs: Bool {
        #if canImport(Glibc)
            guard let process = dlopen(nil, RTLD_NOW), let library = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD) else { return false }
            defer { dlclose(library) }
            guard let resolved = dlsym(process, "malloc"), let own = dlsym(library, "malloc") else { return false }
            return resolved == own
        #else
            return false
        #endif
    }

    /// The bytes in use according to a `malloc_info` report: the totals after the last arena
    /// (`</heap>`) give the memory the arenas hold (`system current`), their free chunks (`fast`
    /// and `rest`, the top chunk included) and the blocks mapped on their own (`mmap`).
    /// - Parameter report: The XML `malloc_info` writes.
    /// - Returns: `current - fast - rest + mmap`, or `nil` if the report does not have them.
    static func inUse(fromMallocInfo report: String) -> Int? {
        let totals = report.range(of: "</heap>", options: .backwards).map { report[$0.upperBound...] } ?? report[...]
        guard let current = size(in: totals, tag: "system", type: "current"),
            let fast = size(in: totals, tag: "total", type: "fast"),
            let rest = size(in: totals, tag: "total", type: "rest")
        else { return nil }
        let mapped = size(in: totals, tag: "total", type: "mmap") ?? 0
        return current - fast - rest + mapped
    }

    /// The `size` of the first `<tag type="type" … size="N"/>` in `text`.
    private static func size(in text: Substring, tag: String, type: String) -> Int? {
        guard let element = text.range(of: "<\(tag) type=\"\(type)\"") else { return nil }
        let rest = text[element.upperBound...]
        guard let end = rest.firstIndex(of: ">"), let attribute = rest[..<end].range(of: "size=\"") else { return nil }
        let digits = rest[attribute.upperBound...].prefix { $0.isASCII && $0.isNumber }
        return Int(digits)
    }

    #if canImport(Glibc)
        private typealias MallocInfo = @convention(c) (Int32, UnsafeMutablePointer<FILE>?) -> Int32

        /// `malloc_info(0, stream)` into memory, or `nil`.
        private static func mallocInfo() -> String? {
            guard let process = dlopen(nil, RTLD_NOW), let symbol = dlsym(process, "malloc_info") else { return nil }
            let function = unsafeBitCast(symbol, to: MallocInfo.self)
            var buffer: UnsafeMutablePointer<CChar>?
            var length = 0
            guard let stream = open_memstream(&buffer, &length) else { return nil }
            let status = function(0, stream)
            fclose(stream)
            defer { free(buffer) }
            guard status == 0, let buffer else { return nil }
            return String(cString: buffer)
        }
    #endif
}
