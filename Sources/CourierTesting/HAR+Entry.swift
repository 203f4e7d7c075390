import CourierCore
import CourierResilience

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension HAR {
    /// One exchange: a request and its response.
    public struct Entry: Codable, Sendable, Hashable {
        /// The page the entry belongs to, in browser logs.
        public var pageref: String?
        /// When the request started, in ISO 8601 with milliseconds.
        public var startedDateTime: String
        /// The total time in milliseconds: the sum of the known ``timings``.
        public var time: Double
        /// The request.
        public var request: EntryRequest
        /// The response. A failed exchange has status 0 and `_error`.
        public var response: EntryResponse
        /// Cache information; Courier writes it empty.
        public var cache: Cache
        /// The phases of the exchange.
        public var timings: Timings
        /// The server's IP address, when known.
        public var serverIPAddress: String?
        /// The connection's identifier, when known.
        public var connection: String?
        /// A comment.
        public var comment: String?
        /// Why the exchange failed, for an entry whose request got no response (Courier and
        /// Chrome extension field).
        public var _error: String?

        /// Creates an entry.
        /// - Parameters:
        ///   - startedDateTime: When the request started, in ISO 8601.
        ///   - time: The total time in milliseconds.
        ///   - request: The request.
        ///   - response: The response.
        ///   - timings: The phases.
        public init(
            startedDateTime: String, time: Double, request: EntryRequest, response: EntryResponse,
            timings: Timings
        ) {
            self.startedDateTime = startedDateTime
            self.time = time
            self.request = request
            self.response = response
            self.cache = Cache()
            self.timings = timings
        }
    }

    /// Cache information; Courier records none.
    public struct Cache: Codable, Sendable, Hashable {
        /// A comment.
        public var comment: String?

        /// Creates empty cache information.
        public init() {}
    }

    /// The phases of an exchange in milliseconds; -1 for a phase that does not apply or is not
    /// known. `send`, `wait` and `receive` are required.
    public struct Timings: Codable, Sendable, Hashable {
        /// Time queued before sending.
        public var blocked: Double?
        /// DNS resolution.
        public var dns: Double?
        /// Connecting.
        public var connect: Double?
        /// Sending the request.
        public var send: Double
        /// Waiting for the response (Courier records the whole exchange here).
        public var wait: Double
        /// Receiving the response.
        public var receive: Double
        /// TLS negotiation.
        public var ssl: Double?
        /// A comment.
        public var comment: String?

        /// Creates timings.
        /// - Parameters:
        ///   - send: Sending.
        ///   - wait: Waiting.
        ///   - receive: Receiving.
        public init(send: Double, wait: Double, receive: Double) {
            self.send = send
            self.wait = wait
            self.receive = receive
            self.blocked = -1
            self.dns = -1
            self.connect = -1
            self.ssl = -1
        }
    }
}

// Lenient reading: files from other tools often leave out required arrays and sizes. Writing
// always includes every field HAR 1.2 requires.

extension HAR.Entry {
    /// Reads an entry; `cache` and `timings` may be missing.
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError` when `startedDateTime`, `request` or `response` is missing.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        pageref = try container.decodeIfPresent(String.self, forKey: .pageref)
        startedDateTime = try container.decode(String.self, forKey: .startedDateTime)
        time = try container.decodeIfPresent(Double.self, forKey: .time) ?? -1
        request = try container.decode(HAR.EntryRequest.self, forKey: .request)
        response = try container.decode(HAR.EntryResponse.self, forKey: .response)
        cache = try container.decodeIfPresent(HAR.Cache.self, forKey: .cache) ?? HAR.Cache()
        timings = try container.decodeIfPresent(HAR.Timings.self, forKey: .timings) ?? HAR.Timings(send: 0, wait: 0, receive: 0)
        serverIPAddress = try container.decodeIfPresent(String.self, forKey: .serverIPAddress)
        connection = try container.decodeIfPresent(String.self, forKey: .connection)
        comment = try container.decodeIfPresent(String.self, forKey: .comment)
        _error = try container.decodeIfPresent(String.self, forKey: ._error)
    }
}
