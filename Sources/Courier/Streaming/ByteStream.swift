import Foundation

/// A body that arrives in chunks: an `AsyncSequence` of `Data`, read once, in bounded memory.
///
/// A `ByteStream` comes from ``Executor/stream(_:options:)`` (as ``StreamedResponse/body``), or
/// from ``makeStream(bufferLimit:)`` for an executor or test of your own. At most
/// ``StreamOptions/bufferLimit`` bytes wait between the network and the reader.
///
/// - Reading: `for try await chunk in body`, or one of the views: ``lines``, ``ndjson(_:decoder:maximumLineLength:)``,
///   ``serverSentEvents``; ``collect(upTo:)`` gathers a small body.
/// - Ending early: breaking out of the loop, cancelling the reading task, or dropping the stream
///   unread stops the transfer at once. ``cancel()`` does it explicitly.
/// - Errors are ``CourierError``s: a transport failure mid-body, ``CourierError/Cause/timedOut``
///   when the request's ``Request/deadline`` passes, ``CourierError/Cause/cancelled``.
///
/// ```swift
/// let response = try await executor.stream(.get |> url("https://example.com/big.bin"))
/// var total = 0
/// for try await chunk in response.body { total += chunk.count }
/// ```
public struct ByteStream: AsyncSequence, Sendable {
    /// A chunk of the body; never empty.
    public typealias Element = Data
    /// Errors thrown while reading.
    public typealias Failure = CourierError

    /// How many bytes may wait between producer and reader by default: 8 MiB.
    public static let defaultBufferLimit = 8 << 20

    let channel: StreamChannel
    /// Stops the transfer when the last copy of the stream is dropped.
    private let lifetime: Lifetime

    init(channel: StreamChannel) {
        self.channel = channel
        self.lifetime = Lifetime(channel)
    }

    /// A stream of one chunk (none when `data` is empty): a buffered body in streaming form.
    /// - Parameter data: The whole body.
    public init(_ data: Data) {
        self.init(chunks: [data])
    }

    /// A stream of the given chunks (empty ones are skipped), already finished.
    /// - Parameter chunks: The chunks, in order.
    public init(chunks: [Data]) {
        let channel = StreamChannel(limit: Int.max)
        for chunk in chunks { channel.yield(chunk) }
        channel.finish()
        self.init(channel: channel)
    }

    /// Makes a stream and the continuation that feeds it, for executors and tests of your own.
    /// - Parameter bufferLimit: The most bytes that may wait unread.
    /// - Returns: The stream to hand to the reader and the continuation to write to.
    public static func makeStream(bufferLimit: Int = defaultBufferLimit) -> (stream: ByteStream, continuation: Continuation) {
        let channel = StreamChannel(limit: bufferLimit)
        return (ByteStream(channel: channel), Continuation(channel: channel))
    }

    /// Creates the iterator. A stream is read once: a second iteration continues where the first
    /// stopped, or ends at once when the first one was abandoned (which stops the transfer).
    public func makeAsyncIterator() -> Iterator {
        Iterator(channel: channel, lifetime: Lifetime(channel), stream: self)
    }

    /// Stops the transfer now; a pending or later read throws ``CourierError/Cause/cancelled``.
    public func cancel() {
        channel.terminate(CourierError(.cancelled))
    }

    /// Reads the whole body into memory, refusing more than `limit` bytes.
    /// - Parameter limit: The most bytes to accept.
    /// - Returns: The body.
    /// - Throws: ``CourierError/Cause/responseTooLarge(limit:)`` (the transfer is stopped) or the
    ///   stream's error.
    public func collect(upTo limit: Int) async throws(CourierError) -> Data {
        var data = Data()
        var iterator = makeAsyncIterator()
        while let chunk = try await iterator.next() {
            guard data.count + chunk.count <= Swift.max(0, limit) else {
                cancel()
                throw CourierError(.responseTooLarge(limit: Swift.max(0, limit)))
            }
            data.append(chunk)
        }
        return data
    }

    /// The same stream, with `chunk` called for each chunk the reader takes and `end` called once
    /// when reading ends: `nil` at a normal end, the error otherwise (also when the stream is
    /// dropped or cancelled unread). For middleware that logs, records or counts a body.
    /// - Parameters:
    ///   - chunk: Called with each chunk, on the reading task.
    ///   - end: Called once at the end.
    /// - Returns: The observed stream; read it instead of this one.
    public func observing(
        chunk: @escaping @Sendable (Data) -> Void, end: @escaping @Sendable (CourierError?) -> Void
    ) -> ByteStream {
        channel.observe(StreamChannel.Observer(chunk: chunk, end: end))
        return self
    }

    /// Reads the chunks of a ``ByteStream``.
    public struct Iterator: AsyncIteratorProtocol {
        let channel: StreamChannel
        let lifetime: Lifetime
        /// Keeps the stream's own lifetime while iterating a temporary (`for … in response.body`).
        let stream: ByteStream

        /// The next chunk, or `nil` at the end.
        /// - Throws: ``CourierError``: the transport's failure, a deadline, cancellation.
        public mutating func next() async throws(CourierError) -> Data? {
            try await channel.next()
        }

        /// The next chunk and every chunk already waiting behind it, up to about `maximum`
        /// bytes, joined; `nil` at the end. Fewer, larger reads for consumers with a per-call
        /// cost (a file write).
        mutating func nextBatch(upTo maximum: Int) async throws(CourierError) -> Data? {
            guard var batch = try await channel.next() else { return nil }
            while batch.count < maximum, let more = channel.poll() { batch.append(more) }
            return batch
        }
    }

    /// The producer's end of a ``ByteStream``.
    public struct Continuation: Sendable {
        let channel: StreamChannel

        /// Adds a chunk without waiting. When it would put more than the buffer limit unread,
        /// the stream ends with ``CourierError/Cause/slowConsumer(bufferLimit:)`` instead.
        /// - Parameter chunk: The bytes; an empty chunk is ignored.
        /// - Returns: `false` once the stream accepts no more chunks: stop producing.
        @discardableResult
        public func yield(_ chunk: Data) -> Bool { channel.yield(chunk) }

        /// Adds a chunk, first waiting while the buffer is full: backpressure for producers that
        /// can wait.
        /// - Parameter chunk: The bytes; an empty chunk is ignored.
        /// - Returns: `false` once the stream accepts no more chunks: stop producing.
        public func send(_ chunk: Data) async -> Bool { await channel.send(chunk) }

        /// Ends the stream once the reader has taken the buffered chunks, normally or with an
        /// error (wrapped in ``CourierError``).
        /// - Parameter error: The failure, or `nil` for a normal end.
        public func finish(throwing error: (any Error)? = nil) {
            channel.finish(error.map { CourierError.wrapping($0, request: nil) })
        }

        /// Registers an action to run once if the reader stops the stream early (cancels, breaks
        /// out, drops it, falls too far behind): the cue to stop producing.
        /// - Parameter action: The action; runs at once if the stream is already stopped.
        public func onTermination(_ action: @escaping @Sendable () -> Void) {
            channel.onTermination(action)
        }

        /// Whether the stream has ended or been stopped.
        public var isClosed: Bool { channel.isClosed }
    }
}

/// Stops a stream's transfer when the last reference to a stream (or iterator) goes away.
final class Lifetime: Sendable {
    private let channel: StreamChannel
    init(_ channel: StreamChannel) { self.channel = channel }
    deinit { channel.terminate(CourierError(.cancelled)) }
}
