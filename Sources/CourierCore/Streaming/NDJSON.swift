#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension ByteStream {
    /// The body as JSON Lines / NDJSON: one value decoded from each line; blank lines are skipped.
    ///
    /// ```swift
    /// for try await entry in response.body.ndjson(LogEntry.self) { print(entry.message) }
    /// ```
    /// - Parameters:
    ///   - type: The type of each line's value.
    ///   - decoder: The decoder.
    ///   - maximumLineLength: The longest line accepted, in bytes.
    /// - Returns: The decoded values; a line that fails to decode throws
    ///   ``CourierError/Cause/decodingFailed(_:)`` naming the line number, and stops the transfer.
    public func ndjson<Value: Decodable & Sendable>(
        _ type: Value.Type, decoder: JSONDecoder = JSONDecoder(), maximumLineLength: Int = LineSplitter.defaultMaximumLength
    ) -> JSONLines<Value> {
        JSONLines(base: self, decoder: decoder, maximumLineLength: maximumLineLength)
    }

    /// The values of a JSON Lines body.
    public struct JSONLines<Value: Decodable & Sendable>: AsyncSequence, Sendable {
        /// A decoded line.
        public typealias Element = Value
        /// Errors thrown while reading.
        public typealias Failure = CourierError
        let base: ByteStream
        let decoder: JSONDecoder
        let maximumLineLength: Int

        /// Creates the iterator.
        public func makeAsyncIterator() -> Iterator {
            Iterator(
                lines: ParsingIterator(base.makeAsyncIterator(), parser: NumberedLines(splitter: LineSplitter(maximumLength: maximumLineLength))),
                decoder: decoder)
        }

        /// Reads the values.
        public struct Iterator: AsyncIteratorProtocol {
            var lines: ParsingIterator<NumberedLines>
            let decoder: JSONDecoder

            /// The next value, or `nil` at the end.
            /// - Throws: The stream's ``CourierError`` or a decoding failure naming the line.
            public mutating func next() async throws(CourierError) -> Value? {
                try await next(isolation: nil)
            }

            /// The next value, read without leaving `actor` (see ``ByteStream/Iterator/next(isolation:)``).
            /// - Parameter actor: The actor the reader runs on, if any.
            /// - Throws: The stream's ``CourierError`` or a decoding failure naming the line.
            public mutating func next(isolation actor: isolated (any Actor)?) async throws(CourierError) -> Value? {
                while let (number, line) = try await lines.next(isolation: actor) {
                    if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
                    do {
                        return try decoder.decode(Value.self, from: line)
                    } catch {
                        var failure = DecodingFailure(value: Value.self, error: error, body: line)
                        failure.message = "line \(number): " + failure.message
                        let courierError = CourierError(.decodingFailed(failure))
                        lines.stop(courierError)
                        throw courierError
                    }
                }
                return nil
            }
        }
    }
}
