#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A ``BodySource`` as a transport sends it: its length taken once, when the request goes out
/// (what the transport writes as `Content-Length`), and its chunks held to that length. Every
/// transport that streams a body reads it through this, so the rule is written once:
///
/// - **No byte past the declared length is ever handed over.** A chunk that would run past it is
///   refused before any of it is; a body that runs on past its length (a producer that yields
///   more, a file that grows while it is read) is a ``CourierError/Cause/invalidRequest(_:)``
///   whose ``RequestProblem/Kind/invalidFraming`` problem says so.
/// - **The last bytes wait for the source's end.** The chunk that completes the length is handed
///   over only once the source has said it has nothing more, so a server never receives a whole
///   request from a body that was about to break its length: a keep-alive server cannot answer
///   it, and the bytes after it can never be read as a second request (request smuggling).
/// - **A body that ends short of its length** (a producer that yields less, a file that shrinks)
///   is the same error; the transport closes the connection, whose request the server can never
///   finish reading.
///
/// A body of unknown length (``length`` is `nil`) is handed over as it comes, to be sent with
/// chunked transfer coding. A cancelled task ends the source early: that is a cancellation
/// (`CancellationError`), not a body that disagrees with its length.
@_spi(Transports) public struct FramedBody: AsyncSequence, Sendable {
    /// A chunk of the body.
    public typealias Element = Data

    /// The body.
    public let source: BodySource
    /// The length the request declares (`Content-Length`), taken when this value was made; `nil`
    /// when it cannot be known without reading (a sequence without a length).
    public let length: Int64?
    private let chunkSize: Int

    /// The body of `source`, with its length taken now.
    /// - Parameters:
    ///   - source: The body.
    ///   - chunkSize: The largest chunk read from a file.
    public init(_ source: BodySource, chunkSize: Int = 256 << 10) {
        self.source = source
        self.length = source.knownLength
        self.chunkSize = chunkSize
    }

    /// Reads the body (once, for a one-shot sequence).
    public func makeAsyncIterator() -> Iterator {
        Iterator(base: source.chunks(of: chunkSize).makeAsyncIterator(), length: length, source: source)
    }

    /// Hands over the source's chunks while they keep to the declared length.
    public struct Iterator: AsyncIteratorProtocol {
        private var base: AsyncThrowingStream<Data, any Error>.Iterator
        private let length: Int64?
        private let source: BodySource
        /// Bytes handed over so far.
        private var count: Int64 = 0
        private var ended = false

        init(base: AsyncThrowingStream<Data, any Error>.Iterator, length: Int64?, source: BodySource) {
            self.base = base
            self.length = length
            self.source = source
        }

        /// The next chunk (never empty), or `nil` once the body is complete.
        /// - Throws: ``CourierError`` (``CourierError/Cause/invalidRequest(_:)``) when the body
        ///   runs past or ends short of its length; what the source throws; `CancellationError`.
        public mutating func next() async throws -> Data? {
            guard !ended else { return nil }
            while let chunk = try await base.next() {
                guard !chunk.isEmpty else { continue }
                guard let length else {
                    count += Int64(chunk.count)
                    return chunk
                }
                guard Int64(chunk.count) <= length - count else {
                    ended = true
                    throw FramedBody.mismatch(source, length: length, read: nil)
                }
                count += Int64(chunk.count)
                if count == length {
                    // Held back until the source says it is done (see the type's rules).
                    while let more = try await base.next() {
                        guard more.isEmpty else {
                            ended = true
                            throw FramedBody.mismatch(source, length: length, read: nil)
                        }
                    }
                    ended = true
                }
                return chunk
            }
            ended = true
            try Task.checkCancellation()
            if let length, count != length { throw FramedBody.mismatch(source, length: length, read: count) }
            return nil
        }
    }

    /// The error for a body that ran past its `length` (`read` is `nil`) or ended after `read`
    /// bytes, short of it.
    package static func mismatch(_ source: BodySource, length: Int64, read: Int64?) -> CourierError {
        let message: String
        switch (source.storage, read) {
        case (.file(let url), nil):
            message = "the file \(url.lastPathComponent.debugDescription) grew past the \(length) bytes it had when its upload started"
        case (.file(let url), let read?):
            message =
                "the file \(url.lastPathComponent.debugDescription) shrank while it was uploaded: \(read) of the \(length) bytes it had when its upload started could be read"
        case (.segments, nil):
            message = "the body's parts grew past the \(length) bytes they had when the upload started (a file part grew)"
        case (.segments, let read?):
            message = "the body's parts shrank while they were uploaded: \(read) of the \(length) bytes they had could be read (a file part shrank)"
        case (.sequence, nil):
            message = "the body sequence produced more than the \(length) bytes it declared"
        case (.sequence, let read?):
            message = "the body sequence produced \(read) bytes but declared a length of \(length)"
        }
        return CourierError(
            .invalidRequest([
                RequestProblem(.invalidFraming, message)
            ]))
    }
}
