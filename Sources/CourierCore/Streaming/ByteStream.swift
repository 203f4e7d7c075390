#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

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

    /// Where the bytes are.
    enum Source: Sendable {
        /// The whole body, already in memory.
        case inHand(Data)
        /// A body still arriving through a channel; the lifetime stops the transfer when the last
        /// copy of the stream goes away.
        case live(StreamChannel, Lifetime)
    }

    let source: Source
    /// Watchers added by ``observing(chunk:end:)``, in the order they were added.
    let observations: [Observation]

    package init(channel: StreamChannel) {
        self.source = .live(channel, Lifetime(channel))
        self.observations = []
    }

    private init(source: Source, observations: [Observation]) {
        self.source = source
        self.observations = observations
    }

    /// A body already in memory: one chunk (none when `data` is empty). Costs no buffer, no
    /// task and no lock; ``bufferedData`` hands the bytes back as they are.
    /// - Parameter data: The whole body.
    public init(_ data: Data) {
        self.init(source: .inHand(data), observations: [])
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

    /// The whole body when it is already in memory and nobody observes it (a buffered
    /// transport's answer, a stub, a replay, ``init(_:)``); `nil` for a body still arriving.
    ///
    /// Middleware that needs the body (a logger, a recorder) reads it here at no cost, and
    /// observes the stream (``observing(chunk:end:)``) only when this is `nil`. A body in hand can
    /// be read any number of times.
    public var bufferedData: Data? {
        guard observations.isEmpty, case .inHand(let data) = source else { return nil }
        return data
    }

    /// The whole body when it is in memory, observed or not.
    package var inHand: Data? {
        guard case .inHand(let data) = source else { return nil }
        return data
    }

    /// Holds a body still arriving to `rules` (see ``Exchange``).
    func enforce(_ rules: BodyRules) {
        if case .live(let channel, _) = source { channel.enforce(rules) }
    }

    /// Whether the body is still arriving and nobody observes it yet: what the core may settle
    /// (``StreamedResponse/settled(answering:)``) without hiding a chunk from an observer.
    var isLiveAndUnobserved: Bool {
        guard observations.isEmpty, case .live = source else { return false }
        return true
    }

    /// Creates the iterator. A stream that is still arriving is read once: a second iteration
    /// continues where the first stopped, or ends at once when the first one was abandoned (which
    /// stops the transfer).
    public func makeAsyncIterator() -> Iterator {
        switch source {
        case .inHand(let data): Iterator(source: .inHand(data.isEmpty ? nil : data), observations: observations)
        case .live(let channel, let lifetime):
            Iterator(source: .live(channel, Lifetime(channel), stream: lifetime), observations: observations)
        }
    }

    /// Stops the transfer now; a pending or later read throws ``CourierError/Cause/cancelled``.
    /// Does nothing to a body in hand. Observers see the body ``Ending/abandoned``: the reader
    /// chose not to read the rest, which is not a failure of the request.
    public func cancel() {
        terminate(.readerStop)
    }

    /// Stops the transfer with `error`: what a reader that gives up (a parser that found a
    /// malformed line, a deadline) calls.
    func terminate(_ error: CourierError) {
        if case .live(let channel, _) = source { channel.terminate(error) }
    }

    /// Stops the transfer with an error, without keeping the stream alive (a timer holds this,
    /// not the stream, so that dropping the stream still stops the transfer at once).
    var stopper: @Sendable (CourierError) -> Void {
        guard case .live(let channel, _) = source else { return { _ in } }
        return { channel.terminate($0) }
    }

    /// Reads the whole body into memory, refusing more than `limit` bytes.
    /// - Parameter limit: The most bytes to accept.
    /// - Returns: The body.
    /// - Throws: ``CourierError/Cause/responseTooLarge(limit:)`` (the transfer is stopped) or the
    ///   stream's error.
    public func collect(upTo limit: Int) async throws(CourierError) -> Data {
        let limit = Swift.max(0, limit)
        if let data = bufferedData {
            guard data.count <= limit else { throw CourierError(.responseTooLarge(limit: limit)) }
            return data
        }
        var data = Data()
        var iterator = makeAsyncIterator()
        while let chunk = try await iterator.next() {
            guard data.count + chunk.count <= limit else {
                iterator.stop(CourierError(.responseTooLarge(limit: limit)))
                throw CourierError(.responseTooLarge(limit: limit))
            }
            data.append(chunk)
        }
        return data
    }

    /// A stream of the same body with `chunk` called for each chunk the reader takes and `end`
    /// called once when reading ends: ``Ending/complete`` when the whole body went by,
    /// ``Ending/abandoned`` when the reader stopped early or dropped the body unread, and
    /// ``Ending/failed(_:)`` with the error otherwise. For middleware that logs, records or
    /// counts a body.
    ///
    /// This stream is left as it was: read the returned one instead (its ``bufferedData`` is
    /// `nil`, so that every reader goes past the observer).
    /// - Parameters:
    ///   - chunk: Called with each chunk, on the reading task.
    ///   - end: Called once at the end.
    /// - Returns: The observed stream.
    public func observing(
        chunk: @escaping @Sendable (Data) -> Void, end: @escaping @Sendable (Ending) -> Void
    ) -> ByteStream {
        let observation = Observation(chunk: chunk, end: end)
        if case .live(let channel, _) = source {
            channel.onStop { [weak observation] error in observation?.finish(error) }
        }
        return ByteStream(source: source, observations: observations + [observation])
    }

    /// A stream of the same body that counts the bytes its reader takes, and calls `end` once
    /// when reading ends, with how it ended (see ``observing(chunk:end:)``) and the count: what
    /// metrics and tracing record as `http.response.body.size`.
    /// - Parameter end: Called once at the end, with the ending and the bytes read.
    /// - Returns: The observed stream.
    public func counting(end: @escaping @Sendable (_ ending: Ending, _ bytes: Int) -> Void) -> ByteStream {
        let count = Locked(0)
        return observing(chunk: { chunk in count.withLock { $0 += chunk.count } }, end: { ending in end(ending, count.withLock { $0 }) })
    }

    /// Reads the chunks of a ``ByteStream``.
    public struct Iterator: AsyncIteratorProtocol {
        enum Source {
            /// What is left of a body in hand.
            case inHand(Data?)
            /// The channel, this iterator's lifetime, and the stream's own (kept while iterating a
            /// temporary: `for … in response.body`).
            case live(StreamChannel, Lifetime, stream: Lifetime)
        }

        var source: Source
        let observations: [Observation]

        /// The next chunk, or `nil` at the end.
        /// - Throws: ``CourierError``: the transport's failure, a deadline, cancellation.
        public mutating func next() async throws(CourierError) -> Data? {
            try await next(isolation: nil)
        }

        /// The next chunk, or `nil` at the end, read without leaving `actor`: what a `for try
        /// await` loop on the main actor calls (SE-0421), so that iterating a stream from a view
        /// model costs no executor hop per chunk.
        /// - Parameter actor: The actor the reader runs on, if any.
        /// - Throws: ``CourierError``: the transport's failure, a deadline, cancellation.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(CourierError) -> Data? {
            let chunk: Data?
            switch source {
            case .inHand(let data):
                source = .inHand(nil)
                chunk = data
            case .live(let channel, _, _):
                do {
                    chunk = try await channel.next(isolation: actor)
                } catch {
                    for observation in observations { observation.finish(error) }
                    throw error
                }
            }
            report(chunk)
            return chunk
        }

        /// The next chunk and every chunk already waiting behind it, up to about `maximum`
        /// bytes, joined; `nil` at the end. Fewer, larger reads for consumers with a per-call
        /// cost (a file write).
        mutating func nextBatch(upTo maximum: Int) async throws(CourierError) -> Data? {
            guard var batch = try await next() else { return nil }
            guard case .live(let channel, _, _) = source else { return batch }
            while batch.count < maximum, let more = channel.poll() {
                report(more)
                batch.append(more)
            }
            return batch
        }

        /// The next chunks, as they arrived (not joined), about `minimum` bytes or more when the
        /// reader has to wait (see ``StreamChannel/next(isolation:atLeast:)``: the wait ends
        /// sooner at the end of the stream or after a few milliseconds) and at most about
        /// `maximum`; `nil` at the end. For a consumer that pays per wake-up and per call, not
        /// per byte: a download's file writes.
        mutating func nextChunks(atLeast minimum: Int, upTo maximum: Int) async throws(CourierError) -> [Data]? {
            guard case .live(let channel, _, _) = source else {
                return try await next().map { [$0] }
            }
            let first: Data?
            do {
                first = try await channel.next(isolation: nil, atLeast: minimum)
            } catch {
                for observation in observations { observation.finish(error) }
                throw error
            }
            report(first)
            guard let first else { return nil }
            var chunks = [first]
            var count = first.count
            while count < maximum, let more = channel.poll() {
                report(more)
                chunks.append(more)
                count += more.count
            }
            return chunks
        }

        /// Stops the transfer with `error` (the reader gives up on it).
        func stop(_ error: CourierError) {
            if case .live(let channel, _, _) = source { channel.terminate(error) }
            for observation in observations { observation.finish(error) }
        }

        private func report(_ chunk: Data?) {
            guard !observations.isEmpty else { return }
            for observation in observations {
                if let chunk { observation.chunk(chunk) } else { observation.finish(nil) }
            }
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

        /// Offers a chunk without waiting, for a producer that pauses instead of suspending (an
        /// event loop that stops reading its socket): ``Offer/taken`` when there is room, as
        /// ``send(_:)`` would take it; ``Offer/full`` when there is none, the chunk left with the
        /// producer and `whenRoom` kept, to run once with `true` when the reader has taken half
        /// the buffer (offer the chunk again then) or with `false` when the stream stops;
        /// ``Offer/closed`` once the stream takes no more. One producer at a time.
        /// - Parameters:
        ///   - chunk: The bytes; an empty chunk is taken.
        ///   - whenRoom: Runs at most once, on the reader's thread or the one that stops the
        ///     stream, for an offer that found the buffer full.
        /// - Returns: What became of the chunk.
        @_spi(Transports) public func offer(_ chunk: Data, whenRoom: @escaping @Sendable (Bool) -> Void) -> Offer {
            channel.offer(chunk, whenRoom: whenRoom)
        }

        /// Whether ``yield(_:)`` would take a chunk of `count` bytes now, without going over the
        /// buffer limit: for a producer (the only one) that writes only when it need not wait.
        package func hasRoom(for count: Int) -> Bool { channel.hasRoom(for: count) }

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

extension ByteStream {
    /// What became of a chunk offered with ``Continuation/offer(_:whenRoom:)``.
    @_spi(Transports) public enum Offer: Sendable, Equatable {
        /// The stream took it.
        case taken
        /// The buffer is full: the chunk stays with the producer until `whenRoom` runs.
        case full
        /// The stream takes no more chunks: stop producing.
        case closed
    }

    /// How reading a body ended, as ``ByteStream/observing(chunk:end:)`` reports it.
    #if hasAttribute(nonexhaustive)
        @nonexhaustive
    #endif
    public enum Ending: Sendable, CustomStringConvertible {
        /// The whole body went by.
        case complete
        /// The reader stopped before the end, or dropped the body without reading it
        /// (``ByteStream/cancel()``, a `break`, a response whose body it did not need): the rest
        /// was not read. Not a failure of the request; the chunks that went by say how far it got.
        case abandoned
        /// Reading failed: the transport's error, a limit, the deadline, a parser that gave up,
        /// or the reading task was cancelled.
        case failed(CourierError)

        /// The error of ``failed(_:)``; `nil` for the other endings.
        public var error: CourierError? {
            if case .failed(let error) = self { return error }
            return nil
        }

        /// `complete`, `abandoned`, or `failed: ` and the error's summary.
        public var description: String {
            switch self {
            case .complete: "complete"
            case .abandoned: "abandoned"
            case .failed(let error): "failed: \(error.summary)"
            }
        }

        /// The ending that a stream stopped with `error` (or ended normally, for `nil`) has.
        init(_ error: CourierError?) {
            guard let error else {
                self = .complete
                return
            }
            self = error.isReaderStop ? .abandoned : .failed(error)
        }
    }
}

/// One ``ByteStream/observing(chunk:end:)`` watcher: its end runs once, at the first of the
/// reader's end, the stream's stop, or the last copy of the observed stream going away.
final class Observation: Sendable {
    let chunk: @Sendable (Data) -> Void
    private let end: @Sendable (ByteStream.Ending) -> Void
    private let ended = Locked(false)

    init(chunk: @escaping @Sendable (Data) -> Void, end: @escaping @Sendable (ByteStream.Ending) -> Void) {
        self.chunk = chunk
        self.end = end
    }

    /// Runs `end` unless it already ran: normally for `nil`, otherwise as the error says.
    func finish(_ error: CourierError?) {
        guard ended.withLock({ ended in defer { ended = true }; return !ended }) else { return }
        end(ByteStream.Ending(error))
    }

    /// The observed stream went away without being read to its end.
    deinit { finish(.readerStop) }
}

/// Stops a stream's transfer when the last reference to a stream (or iterator) goes away.
final class Lifetime: Sendable {
    private let channel: StreamChannel
    init(_ channel: StreamChannel) { self.channel = channel }
    deinit { channel.terminate(.readerStop) }
}
