import CourierCore

import Dispatch
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An ``HTTPCacheStore`` in a directory, bounded by the bytes its files hold: it survives
/// relaunches, and a torn or damaged file is never served.
///
/// One file per URL holds every response stored for it. A file is written whole to a temporary
/// name and renamed into place (so a crash leaves the old file or the new one), and begins with
/// its length and a checksum of what follows: a file that does not match (cut short, damaged,
/// written by something else) is removed and treated as absent. The least recently used files
/// go first when the directory would pass ``maximumSize``.
///
/// File work runs on a queue of the store's own, never on a Swift concurrency thread.
///
/// ```swift
/// let directory = FileManager.default.temporaryDirectory.appendingPathComponent("api-cache")
/// let cache = HTTPCache(store: try DiskCacheStore(directory: directory, maximumSize: 100 << 20))
/// ```
public final class DiskCacheStore: HTTPCacheStore, @unchecked Sendable {
    // `@unchecked Sendable` is sound: `index` and `loaded` are read and written only on `queue`,
    // a serial queue; the other stored properties are constants.
    private let queue = DispatchQueue(label: "Courier.DiskCacheStore")
    /// The directory the files are in.
    public let directory: URL
    /// The most bytes the files may hold together.
    public let maximumSize: Int
    /// File name → size and last use, read from the directory on first use.
    private var index: [String: (size: Int, used: Date)] = [:]
    private var loaded = false

    /// The first bytes of every file: a format name and version.
    private static let magic = Data("COURIER-CACHE-1\n".utf8)

    /// Creates a store in `directory`, making it if need be.
    /// - Parameters:
    ///   - directory: The directory; use one for this store alone (files it does not know are
    ///     removed when they are read as entries).
    ///   - maximumSize: The most bytes the files may hold; 50 MiB by default. Negative counts
    ///     as `0`.
    /// - Throws: ``CourierError`` with cause ``CourierError/Cause/fileFailure(_:)`` when the
    ///   directory cannot be made.
    public init(directory: URL, maximumSize: Int = 50 << 20) throws(CourierError) {
        self.directory = directory
        self.maximumSize = Swift.max(0, maximumSize)
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw CourierError(.fileFailure("cannot make the cache directory \(directory.lastPathComponent): \(SystemErrorText.text(for: error))"))
        }
    }

    /// The bytes the files hold now.
    public var size: Int {
        get async { await onQueue { self.loadIndex(); return self.index.values.reduce(0) { $0 + $1.size } } }
    }

    /// The responses stored for `url`, most recent first; a damaged file is removed.
    /// - Parameter url: The key URL.
    /// - Returns: The responses.
    public func responses(for url: String) async -> [CachedResponse] {
        await onQueue { self.read(url) }
    }

    /// Stores `response`, replacing the one with its URL and varied values.
    /// - Parameter response: The response.
    public func store(_ response: CachedResponse) async {
        await onQueue {
            var list = self.read(response.url)
            list.removeAll { $0.varied == response.varied }
            list.insert(response, at: 0)
            self.write(list, for: response.url)
        }
    }

    /// Removes every response stored for `url`.
    /// - Parameter url: The key URL.
    public func removeAll(for url: String) async {
        await onQueue {
            self.loadIndex()
            let name = Self.fileName(url)
            try? FileManager.default.removeItem(at: self.directory.appendingPathComponent(name))
            self.index[name] = nil
        }
    }

    // MARK: On the queue

    private func onQueue<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: work()) }
        }
    }

    private func loadIndex() {
        guard !loaded else { return }
        loaded = true
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        for name in names where name.hasSuffix(".cache") {
            let path = directory.appendingPathComponent(name).path
            let modified = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
            index[name] = (Int(clamping: OpenFile.size(atPath: path) ?? 0), modified ?? .distantPast)
        }
    }

    private func read(_ url: String) -> [CachedResponse] {
        loadIndex()
        let name = Self.fileName(url)
        guard index[name] != nil else { return [] }
        let file = directory.appendingPathComponent(name)
        guard let data = try? Data(contentsOf: file), let payload = Self.payload(of: data),
            let entries = try? JSONDecoder().decode([CachedResponse].self, from: payload), entries.allSatisfy({ $0.url == url })
        else {
            // Torn, damaged, or another URL's (a name collision): never served.
            try? FileManager.default.removeItem(at: file)
            index[name] = nil
            return []
        }
        index[name]?.used = Date()
        return entries
    }

    private func write(_ entries: [CachedResponse], for url: String) {
        loadIndex()
        let name = Self.fileName(url)
        guard let payload = try? JSONEncoder().encode(entries) else { return }
        var data = Self.magic
        data.append(Data("\(payload.count) \(String(Self.checksum(payload), radix: 16))\n".utf8))
        data.append(payload)
        let file = directory.appendingPathComponent(name)
        guard data.count <= maximumSize else {
            try? FileManager.default.removeItem(at: file)
            index[name] = nil
            return
        }
        do {
            try data.write(to: file, options: .atomic)
        } catch {
            return
        }
        index[name] = (data.count, Date())
        var total = index.values.reduce(0) { $0 + $1.size }
        while total > maximumSize, let oldest = index.filter({ $0.key != name }).min(by: { $0.value.used < $1.value.used }) {
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(oldest.key))
            index[oldest.key] = nil
            total -= oldest.value.size
        }
    }

    /// What follows a file's header, when the header names its length and checksum.
    static func payload(of data: Data) -> Data? {
        guard data.starts(with: magic) else { return nil }
        let rest = data.dropFirst(magic.count)
        guard let newline = rest.firstIndex(of: UInt8(ascii: "\n")), newline - rest.startIndex <= 40 else { return nil }
        let header = String(decoding: rest[rest.startIndex..<newline], as: UTF8.self).split(separator: " ")
        guard header.count == 2, let length = Int(header[0]), let sum = UInt64(header[1], radix: 16) else { return nil }
        let payload = Data(rest[(newline + 1)...])
        guard payload.count == length, checksum(payload) == sum else { return nil }
        return payload
    }

    /// The file for a URL: a 64-bit FNV-1a hash of it (the file names its URL inside, so a
    /// collision reads as absent, never as the other URL's response).
    static func fileName(_ url: String) -> String {
        String(checksum(Data(url.utf8)), radix: 16) + ".cache"
    }

    /// FNV-1a, 64 bits.
    static func checksum(_ data: Data) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in data {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return hash
    }
}
