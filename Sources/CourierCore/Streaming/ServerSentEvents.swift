#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One server-sent event (`text/event-stream`), as the WHATWG EventSource rules dispatch it.
public struct ServerSentEvent: Sendable, Hashable, CustomStringConvertible {
    /// The event type: the last `event` field, or `"message"`.
    public var event: String
    /// The `data` fields, joined with LF.
    public var data: String
    /// The last event ID in effect (it persists across events until changed), or `nil` when none
    /// has been set.
    public var id: String?
    /// The reconnection time the stream asked for last (in milliseconds), if any.
    public var retry: Int?

    /// Creates an event.
    /// - Parameters:
    ///   - event: The type; `"message"` by default.
    ///   - data: The data.
    ///   - id: The last event ID.
    ///   - retry: The reconnection time in milliseconds.
    public init(event: String = "message", data: String, id: String? = nil, retry: Int? = nil) {
        self.event = event
        self.data = data
        self.id = id
        self.retry = retry
    }

    /// Decodes ``data`` as JSON.
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - decoder: The decoder.
    /// - Returns: The value.
    /// - Throws: ``CourierError/Cause/decodingFailed(_:)`` naming the event.
    public func decode<Value: Decodable>(_ type: Value.Type = Value.self, decoder: JSONDecoder = JSONDecoder()) throws(CourierError) -> Value {
        do {
            return try decoder.decode(Value.self, from: Data(data.utf8))
        } catch {
            var failure = DecodingFailure(value: Value.self, error: error, body: Data(data.utf8))
            failure.message = "event \(id.map { "id \($0.debugDescription)" } ?? event.debugDescription): " + failure.message
            throw CourierError(.decodingFailed(failure))
        }
    }

    /// The event in the wire format (each data line prefixed, ended by a blank line).
    public var encoded: String {
        var text = ""
        if let id { text += "id: \(id)\n" }
        if event != "message" { text += "event: \(event)\n" }
        if let retry { text += "retry: \(retry)\n" }
        for line in data.split(separator: "\n", omittingEmptySubsequences: false) { text += "data: \(line)\n" }
        return text + "\n"
    }

    /// For example `message id=7: {"delta":"Hi"}`, with secret-looking JSON fields and
    /// `name=value` pairs in the data hidden.
    public var description: String {
        "\(event)\(id.map { " id=\($0)" } ?? ""): \(BodySnippet.redact(data))"
    }
}

/// Turns a `text/event-stream` body into events, fed chunk by chunk, following the WHATWG
/// EventSource parsing rules: a leading BOM dropped; CR, LF or CRLF line endings (split across
/// chunks too); `:` comments ignored; `data` lines joined with LF; `event` (default `message`);
/// `id` persisting across events and ignored when it contains NUL; `retry` used only when all
/// ASCII digits; unknown fields ignored; an event with no data not dispatched; an unfinished
/// event at the end of the stream discarded.
///
/// ``ByteStream/serverSentEvents`` uses this; ``EventSource`` also reads ``lastEventID`` and
/// ``retry`` from it to reconnect.
public struct ServerSentEventParser: Sendable {
    private var lines: LineSplitter
    private var data = ""
    private var hasData = false
    private var eventType = ""
    /// The last event ID buffer: persists across events and reconnections.
    public private(set) var lastEventID = ""
    /// The reconnection time the stream set last, in milliseconds.
    public private(set) var retry: Int?
    /// The most bytes of `data` one event may gather: a stream of `data:` lines that never ends
    /// its event is an error, not an unbounded buffer.
    public let maximumEventSize: Int

    /// The largest event accepted by default: 16 MiB of data.
    public static let defaultMaximumEventSize = 16 << 20

    /// Creates a parser.
    /// - Parameters:
    ///   - lastEventID: The ID to start from (a reconnection's `Last-Event-ID`).
    ///   - retry: The reconnection time set by an earlier connection, in milliseconds.
    ///   - maximumLineLength: The longest line accepted, in bytes.
    ///   - maximumEventSize: The most data bytes one event may gather.
    public init(
        lastEventID: String = "", retry: Int? = nil, maximumLineLength: Int = LineSplitter.defaultMaximumLength,
        maximumEventSize: Int = ServerSentEventParser.defaultMaximumEventSize
    ) {
        self.lines = LineSplitter(maximumLength: maximumLineLength, dropsByteOrderMark: true)
        self.lastEventID = lastEventID
        self.retry = retry
        self.maximumEventSize = max(1, maximumEventSize)
    }

    /// Feeds bytes, calling `event` with each event they complete.
    /// - Parameters:
    ///   - chunk: The next bytes.
    ///   - event: Receives each dispatched event.
    /// - Throws: ``CourierError`` for a line longer than the maximum.
    public mutating func feed(_ chunk: Data, _ event: (ServerSentEvent) throws -> Void) throws {
        var collected: [ArraySlice<UInt8>] = []
        try lines.scanData(chunk) { collected.append($0) }
        for line in collected {
            if let dispatched = process(line) { try event(dispatched) }
            if data.utf8.count > maximumEventSize {
                data = ""
                hasData = false
                throw CourierError(
                    .decodingFailed(
                        DecodingFailure(
                            typeName: "ServerSentEvent", message: "an event's data grew past \(maximumEventSize) bytes without ending",
                            bodySnippet: "")))
            }
        }
    }

    /// Ends the stream. An event without its blank line is discarded, as the rules require.
    public mutating func finish() {
        lines.finishBytes { _ in }
        data = ""
        hasData = false
        eventType = ""
    }

    private mutating func process(_ line: ArraySlice<UInt8>) -> ServerSentEvent? {
        guard let first = line.first else { return dispatch() }
        if first == UInt8(ascii: ":") { return nil }
        let field: ArraySlice<UInt8>
        var value: ArraySlice<UInt8>
        if let colon = line.firstIndex(of: UInt8(ascii: ":")) {
            field = line[line.startIndex..<colon]
            value = line[(colon + 1)...]
            if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
        } else {
            field = line
            value = []
        }
        switch String(decoding: field, as: UTF8.self) {
        case "data":
            if hasData { data += "\n" }
            data += String(decoding: value, as: UTF8.self)
            hasData = true
        case "event":
            eventType = String(decoding: value, as: UTF8.self)
        case "id":
            if !value.contains(0) { lastEventID = String(decoding: value, as: UTF8.self) }
        case "retry":
            if !value.isEmpty, value.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
                retry = Int(String(decoding: value, as: UTF8.self)) ?? Int.max
            }
        default:
            break
        }
        return nil
    }

    private mutating func dispatch() -> ServerSentEvent? {
        defer {
            data = ""
            hasData = false
            eventType = ""
        }
        guard hasData else { return nil }
        return ServerSentEvent(
            event: eventType.isEmpty ? "message" : eventType, data: data,
            id: lastEventID.isEmpty ? nil : lastEventID, retry: retry)
    }
}

extension ByteStream {
    /// The body as server-sent events (`text/event-stream`).
    public var serverSentEvents: ServerSentEvents { ServerSentEvents(base: self, isTerminator: nil, requiresTerminator: false) }

    /// The body as server-sent events, ending (and stopping the transfer) at the first event
    /// `isTerminator` accepts, which is not delivered: for example OpenAI's `data: [DONE]`.
    ///
    /// By default a body that ends without the terminator ends the events normally, as a body
    /// without one would. When the terminator is how the server says the answer is complete (an
    /// LLM's stream), pass `requireTerminator: true`: a body that ends first throws
    /// ``CourierError/Cause/transport(_:)`` with kind ``TransportFailure/Kind/truncatedBody``
    /// (transient), so a cut answer never looks complete.
    ///
    /// ```swift
    /// for try await event in response.body.serverSentEvents(until: { $0.data == "[DONE]" }, requireTerminator: true) {
    ///     print(event.data)
    /// }
    /// ```
    /// - Parameters:
    ///   - isTerminator: Says whether an event ends the stream.
    ///   - requireTerminator: Whether a body that ends before the terminator is an error.
    /// - Returns: The events.
    public func serverSentEvents(
        until isTerminator: @escaping @Sendable (ServerSentEvent) -> Bool, requireTerminator: Bool = false
    ) -> ServerSentEvents {
        ServerSentEvents(base: self, isTerminator: isTerminator, requiresTerminator: requireTerminator)
    }

    /// The events of a ``ByteStream``.
    public struct ServerSentEvents: AsyncSequence, Sendable {
        /// An event.
        public typealias Element = ServerSentEvent
        /// Errors thrown while reading.
        public typealias Failure = CourierError
        let base: ByteStream
        let isTerminator: (@Sendable (ServerSentEvent) -> Bool)?
        let requiresTerminator: Bool

        /// Creates the iterator.
        public func makeAsyncIterator() -> Iterator {
            Iterator(
                events: ParsingIterator(base.makeAsyncIterator(), parser: ServerSentEventParser()), isTerminator: isTerminator,
                requiresTerminator: requiresTerminator)
        }

        /// Each event's `data` decoded as JSON.
        /// - Parameters:
        ///   - type: The type to decode.
        ///   - decoder: The decoder.
        /// - Returns: The decoded values; a failure throws ``CourierError/Cause/decodingFailed(_:)``
        ///   naming the event.
        public func decode<Value: Decodable & Sendable>(
            _ type: Value.Type, decoder: JSONDecoder = JSONDecoder()
        ) -> DecodedEvents<Value> {
            DecodedEvents(base: self, decoder: decoder)
        }

        /// Reads the events.
        public struct Iterator: AsyncIteratorProtocol {
            var events: ParsingIterator<ServerSentEventParser>
            let isTerminator: (@Sendable (ServerSentEvent) -> Bool)?
            let requiresTerminator: Bool
            var terminated = false

            /// The next event, or `nil` at the end.
            /// - Throws: The stream's ``CourierError``, a line that is too long, or a body that
            ///   ended before a required terminator.
            public mutating func next() async throws(CourierError) -> ServerSentEvent? {
                try await next(isolation: nil)
            }

            /// The next event, read without leaving `actor` (see ``ByteStream/Iterator/next(isolation:)``).
            /// - Parameter actor: The actor the reader runs on, if any.
            /// - Throws: The stream's ``CourierError``, a line that is too long, or a body that
            ///   ended before a required terminator.
            public mutating func next(isolation actor: isolated (any Actor)?) async throws(CourierError) -> ServerSentEvent? {
                guard let event = try await events.next(isolation: actor) else {
                    if requiresTerminator && !terminated {
                        terminated = true
                        throw CourierError(
                            .transport(TransportFailure(.truncatedBody, message: "the event stream ended before its terminator event")))
                    }
                    return nil
                }
                if let isTerminator, isTerminator(event) {
                    terminated = true
                    events.stop(CourierError(.cancelled))
                    return nil
                }
                return event
            }
        }
    }

    /// Server-sent events with their data decoded as JSON.
    public struct DecodedEvents<Value: Decodable & Sendable>: AsyncSequence, Sendable {
        /// A decoded value.
        public typealias Element = Value
        /// Errors thrown while reading.
        public typealias Failure = CourierError
        let base: ServerSentEvents
        let decoder: JSONDecoder

        /// Creates the iterator.
        public func makeAsyncIterator() -> Iterator { Iterator(base: base.makeAsyncIterator(), decoder: decoder) }

        /// Reads the values.
        public struct Iterator: AsyncIteratorProtocol {
            var base: ServerSentEvents.Iterator
            let decoder: JSONDecoder

            /// The next value, or `nil` at the end.
            /// - Throws: The stream's ``CourierError`` or a decoding failure naming the event.
            public mutating func next() async throws(CourierError) -> Value? {
                try await next(isolation: nil)
            }

            /// The next value, read without leaving `actor` (see ``ByteStream/Iterator/next(isolation:)``).
            /// - Parameter actor: The actor the reader runs on, if any.
            /// - Throws: The stream's ``CourierError`` or a decoding failure naming the event.
            public mutating func next(isolation actor: isolated (any Actor)?) async throws(CourierError) -> Value? {
                guard let event = try await base.next(isolation: actor) else { return nil }
                do {
                    return try event.decode(Value.self, decoder: decoder)
                } catch {
                    base.events.stop(error)
                    throw error
                }
            }
        }
    }
}
