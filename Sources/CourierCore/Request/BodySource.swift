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

/// A request body read when the request is sent, not when it is built: a file, multipart parts
/// with files among them, or an `AsyncSequence` of bytes. It never has to fit in memory.
///
/// Set one with ``upload(_:contentType:)``, ``upload(_:length:contentType:)`` or a
/// ``multipart(_:encoder:)`` body with file parts. Whenever the length is known (a file, parts,
/// a sequence with a `length`) it is sent as `Content-Length`, on every transport; a sequence
/// of unknown length goes out with chunked transfer coding. A file is read again for each
/// attempt and each 307/308 redirect. ``URLSessionExecutor`` sends a sequence of unknown length
/// while it is produced (a 307/308 redirect that would need it again fails), and writes a file,
/// parts and a sequence of known length to a temporary file as the request is sent, then uploads
/// that (FoundationNetworking can only frame a body stream as chunked, and reads a file past the
/// length it announced); the other transports read the body while they send it.
/// The length is taken once, when the request goes out, and the body is held to it on every
/// transport: a sequence that produces more or fewer bytes than its `length`, or a file (or a
/// file part) that grows or shrinks while it is uploaded, fails with
/// ``CourierError/Cause/invalidRequest(_:)`` (an ``RequestProblem/Kind/invalidFraming`` problem
/// that says which), no byte past the length is sent, the server never receives the request
/// whole, and its connection is not kept (on URLSession a sequence fails before anything is sent).
///
/// A sequence can be read once: a request with one is not retried by ``RetryMiddleware`` (its
/// ``Request/isRetryable`` is `false`), and sending it a second time fails with
/// ``CourierError/Cause/invalidRequest(_:)`` saying why.
public struct BodySource: Sendable, Hashable, CustomStringConvertible {
    /// A piece of a body made of parts.
    package enum Segment: Sendable, Hashable {
        case data(Data)
        case file(URL)
    }

    package enum Storage: Sendable, Hashable {
        case file(URL)
        case segments([Segment])
        case sequence(OneShot)
    }

    /// An `AsyncSequence` of bytes that can be taken once; compared by identity.
    package final class OneShot: Sendable, Hashable {
        package let declaredLength: Int64?
        private let source: Locked<(@Sendable () -> AsyncThrowingStream<Data, any Error>)?>

        init(length: Int64?, makeStream: @escaping @Sendable () -> AsyncThrowingStream<Data, any Error>) {
            self.declaredLength = length
            self.source = Locked(makeStream)
        }

        package func take() -> AsyncThrowingStream<Data, any Error>? {
            source.withLock { source in defer { source = nil }; return source }?()
        }

        package static func == (lhs: OneShot, rhs: OneShot) -> Bool { lhs === rhs }
        package func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    }

    package let storage: Storage

    /// A file, uploaded from disk.
    /// - Parameter url: A file URL.
    /// - Returns: The source.
    public static func file(_ url: URL) -> BodySource { BodySource(storage: .file(url)) }

    /// The bytes of an `AsyncSequence` of `Data` chunks, read once.
    /// - Parameters:
    ///   - sequence: The chunks.
    ///   - length: The total length, when known: the sequence must produce exactly that many bytes.
    /// - Returns: The source.
    public static func sequence<S: AsyncSequence & Sendable>(_ sequence: S, length: Int64? = nil) -> BodySource
    where S.Element == Data {
        BodySource(
            storage: .sequence(
                OneShot(length: length) {
                    // Pulled, a chunk each time the transport asks for one: a producer runs no
                    // further ahead than the socket takes (never into an unbounded buffer), in
                    // the reader's task, so cancelling the reader stops it.
                    let iterator = SequenceReader(sequence.makeAsyncIterator())
                    return AsyncThrowingStream { try await iterator.next() }
                }))
    }

    /// A producer's iterator, advanced by the stream that reads it. `@unchecked Sendable` is
    /// sound: it is reached only through the closure of one `AsyncThrowingStream(unfolding:)`,
    /// taken once (``OneShot``) and read by one transport, one chunk at a time, so `next()` is
    /// never called while another call runs.
    private final class SequenceReader<Base: AsyncIteratorProtocol>: @unchecked Sendable where Base.Element == Data {
        private var base: Base

        init(_ base: Base) { self.base = base }

        func next() async throws -> Data? { try await base.next() }
    }

    /// Whether the body can be sent more than once (files and parts can; a sequence cannot).
    public var isRepeatable: Bool {
        if case .sequence = storage { return false }
        return true
    }

    /// The length in bytes when it can be known without reading: a file's size, the parts' sum,
    /// a sequence's declared length.
    public var knownLength: Int64? {
        switch storage {
        case .file(let url): return Self.size(of: url)
        case .segments(let segments):
            var total: Int64 = 0
            for segment in segments {
                switch segment {
                case .data(let data): total += Int64(data.count)
                case .file(let url):
                    guard let size = Self.size(of: url) else { return nil }
                    total += size
                }
            }
            return total
        case .sequence(let shot): return shot.declaredLength
        }
    }

    /// For example `file report.pdf` or `a one-shot byte sequence`; never the bytes.
    public var description: String {
        switch storage {
        case .file(let url): "file \(url.lastPathComponent)"
        case .segments(let segments): "\(segments.count) parts"
        case .sequence: "a one-shot byte sequence"
        }
    }

    /// Reads the body in chunks of at most `chunkSize` bytes, in bounded memory.
    /// - Parameter chunkSize: The largest chunk.
    /// - Returns: The chunks; reading fails with ``CourierError/Cause/invalidRequest(_:)`` when a
    ///   file cannot be read or a sequence was already used.
    public func chunks(of chunkSize: Int = 256 << 10) -> AsyncThrowingStream<Data, any Error> {
        let chunkSize = max(1, chunkSize)
        switch storage {
        case .file(let url): return Self.read([.file(url)], chunkSize: chunkSize)
        case .segments(let segments): return Self.read(segments, chunkSize: chunkSize)
        case .sequence(let shot):
            guard let stream = shot.take() else {
                return AsyncThrowingStream { $0.finish(throwing: Self.alreadyUsed) }
            }
            return stream
        }
    }

    package static let alreadyUsed = RequestProblem(
        .bodyEncodingFailed,
        "the request's body is a one-shot byte sequence that was already sent; it cannot be sent again "
            + "(retries and redirects need a file or data body)")

    private static func size(of url: URL) -> Int64? {
        guard url.isFileURL else { return nil }
        return OpenFile.size(atPath: url.path)
    }

    private static func read(_ segments: [Segment], chunkSize: Int) -> AsyncThrowingStream<Data, any Error> {
        let reader = SegmentReader(segments: segments, chunkSize: chunkSize)
        return AsyncThrowingStream { try reader.next() }
    }

    /// Reads segments in order, one chunk at a time.
    private final class SegmentReader: Sendable {
        private struct State {
            var index = 0
            var handle: OpenFile?
        }
        private let segments: [Segment]
        private let chunkSize: Int
        private let state = Locked(State())

        init(segments: [Segment], chunkSize: Int) {
            self.segments = segments
            self.chunkSize = chunkSize
        }

        deinit { state.withLock { $0.handle?.close() } }

        func next() throws -> Data? {
            try state.withLock { state in
                while state.index < segments.count {
                    switch segments[state.index] {
                    case .data(let data):
                        state.index += 1
                        if !data.isEmpty { return data }
                    case .file(let url):
                        do {
                            if state.handle == nil {
                                guard url.isFileURL else { throw CocoaError(.fileReadUnsupportedScheme) }
                                state.handle = try OpenFile.reading(url.path)
                            }
                            if let chunk = try state.handle?.read(upTo: chunkSize), !chunk.isEmpty { return chunk }
                            state.handle?.close()
                            state.handle = nil
                            state.index += 1
                        } catch {
                            throw RequestProblem(
                                .bodyEncodingFailed, "the file \(url.lastPathComponent.debugDescription) could not be read")
                        }
                    }
                }
                return nil
            }
        }
    }
}
