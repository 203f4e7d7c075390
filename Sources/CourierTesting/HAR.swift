import CourierCore
import CourierResilience

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An HTTP Archive: the [HAR 1.2](http://www.softwareishard.com/blog/har-12-spec/) format that
/// browser developer tools, proxies and HAR viewers read and write.
///
/// ``HARRecorder`` produces one; ``HARReplayExecutor`` answers from one. The types follow the
/// specification's field names and required fields exactly, so a file Courier writes opens in
/// other tools and a file they write (a browser export, say) can be replayed. Fields Courier adds
/// start with `_`, as the specification asks of custom fields.
public struct HAR: Codable, Sendable, Hashable {
    /// The archive's only top-level field.
    public var log: Log

    /// Creates an archive.
    /// - Parameter log: The log.
    public init(log: Log) {
        self.log = log
    }

    /// The log: who wrote it and the entries.
    public struct Log: Codable, Sendable, Hashable {
        /// The format version, `"1.2"`.
        public var version: String
        /// The program that wrote the log.
        public var creator: Creator
        /// The browser, when a browser wrote the log.
        public var browser: Creator?
        /// Pages, when a browser wrote the log; kept as read.
        public var pages: [PageInfo]?
        /// The exchanges, in the order they started.
        public var entries: [Entry]
        /// A comment.
        public var comment: String?

        /// Creates a log.
        /// - Parameters:
        ///   - version: The format version.
        ///   - creator: The program that wrote it.
        ///   - entries: The exchanges.
        public init(version: String = "1.2", creator: Creator = .courier, entries: [Entry] = []) {
            self.version = version
            self.creator = creator
            self.entries = entries
        }
    }

    /// The name and version of a program.
    public struct Creator: Codable, Sendable, Hashable {
        /// The name.
        public var name: String
        /// The version.
        public var version: String
        /// A comment.
        public var comment: String?

        /// Creates a creator.
        /// - Parameters:
        ///   - name: The name.
        ///   - version: The version.
        public init(name: String, version: String) {
            self.name = name
            self.version = version
        }

        /// Courier itself.
        public static let courier = Creator(name: "Courier", version: "0.1")
    }

    /// A page of a browser log.
    public struct PageInfo: Codable, Sendable, Hashable {
        /// When the page started loading (ISO 8601).
        public var startedDateTime: String
        /// The page's identifier, referenced by entries.
        public var id: String
        /// The page's title.
        public var title: String
        /// Page timings.
        public var pageTimings: PageTimings

        /// Page load timings in milliseconds.
        public struct PageTimings: Codable, Sendable, Hashable {
            /// When the content loaded.
            public var onContentLoad: Double?
            /// When the page loaded.
            public var onLoad: Double?
        }
    }

}

extension HAR {
    /// Reads an archive from JSON.
    /// - Parameter data: The file's bytes (UTF-8, a byte-order mark allowed).
    /// - Throws: ``CourierError`` with cause ``CourierError/Cause/invalidRecording(_:)`` that
    ///   says which field is wrong.
    public init(data: Data) throws(CourierError) {
        var bytes = data
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        do {
            self = try JSONDecoder().decode(HAR.self, from: bytes)
        } catch let error as DecodingError {
            throw CourierError(.invalidRecording("not a HAR 1.2 file: \(error.summary)"), underlyingError: error)
        } catch {
            throw CourierError(.invalidRecording("not a HAR 1.2 file: \(error)"), underlyingError: error)
        }
    }

    /// Reads an archive from a file.
    /// - Parameter url: The file's URL.
    /// - Throws: ``CourierError`` with cause ``CourierError/Cause/invalidRecording(_:)``.
    public init(contentsOf url: URL) throws(CourierError) {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw CourierError(.invalidRecording("cannot read \(url.path): \(SystemErrorText.text(for: error))"), underlyingError: error)
        }
        try self.init(data: data)
    }

    /// The archive as JSON: pretty-printed with sorted keys, so that a recording kept under
    /// version control diffs well.
    /// - Returns: UTF-8 JSON.
    /// - Throws: ``CourierError`` with cause ``CourierError/Cause/invalidRecording(_:)`` when a
    ///   value cannot be encoded (a non-finite time, for instance).
    public func jsonData() throws(CourierError) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            return try encoder.encode(self)
        } catch {
            throw CourierError(.invalidRecording("cannot encode the archive: \(error)"), underlyingError: error)
        }
    }

    /// Writes the archive to a file, atomically.
    /// - Parameter url: The file's URL.
    /// - Throws: ``CourierError`` with cause ``CourierError/Cause/invalidRecording(_:)``.
    public func write(to url: URL) throws(CourierError) {
        let data = try jsonData()
        do {
            try data.write(to: url, options: .atomic)
        } catch {
            throw CourierError(.invalidRecording("cannot write \(url.path): \(SystemErrorText.text(for: error))"), underlyingError: error)
        }
    }
}
