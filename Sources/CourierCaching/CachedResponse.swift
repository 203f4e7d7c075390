import CourierCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A response an ``HTTPCache`` keeps: its head and whole body, the request fields it varies on,
/// and when it was requested and received (for its age, RFC 9111 §4.2.3).
///
/// Its headers match its body: the transport handed the body over decoded, so the stored
/// headers have no `Content-Encoding`, and their `Content-Length` is the body's.
public struct CachedResponse: Sendable, Hashable, Codable {
    /// The URL it answers, without a fragment: the cache key.
    public var url: String
    /// The status code.
    public var status: Int
    /// The header fields (stored as `[name, value]` pairs in order).
    public var headers: HTTPHeaders
    /// The body.
    public var body: Data
    /// The values of the request fields its `Vary` names, lowercase names, normalised (see
    /// ``HTTPCache``); a field the request did not have is absent.
    public var varied: [String: String]
    /// When the request that brought it was sent.
    public var requestTime: Date
    /// When it was received.
    public var responseTime: Date

    /// Creates an entry.
    /// - Parameters:
    ///   - url: The key URL.
    ///   - status: The status code.
    ///   - headers: The header fields.
    ///   - body: The body.
    ///   - varied: The normalised request fields it varies on.
    ///   - requestTime: When the request was sent.
    ///   - responseTime: When the response arrived.
    public init(
        url: String, status: Int, headers: HTTPHeaders, body: Data, varied: [String: String], requestTime: Date, responseTime: Date
    ) {
        self.url = url
        self.status = status
        self.headers = headers
        self.body = body
        self.varied = varied
        self.requestTime = requestTime
        self.responseTime = responseTime
    }

    private enum CodingKeys: String, CodingKey {
        case url, status, fields, body, varied, requestTime, responseTime
    }

    /// Reads a stored response; its fields are `[name, value]` pairs.
    /// - Parameter decoder: The decoder.
    /// - Throws: What the decoder throws.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        url = try container.decode(String.self, forKey: .url)
        status = try container.decode(Int.self, forKey: .status)
        let fields = try container.decode([[String]].self, forKey: .fields)
        headers = HTTPHeaders(fields.compactMap { $0.count == 2 ? HTTPHeaders.Field(name: HeaderName(rawValue: $0[0]), value: $0[1]) : nil })
        body = try container.decode(Data.self, forKey: .body)
        varied = try container.decode([String: String].self, forKey: .varied)
        requestTime = try container.decode(Date.self, forKey: .requestTime)
        responseTime = try container.decode(Date.self, forKey: .responseTime)
    }

    /// Writes the response, its fields as `[name, value]` pairs in order.
    /// - Parameter encoder: The encoder.
    /// - Throws: What the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(url, forKey: .url)
        try container.encode(status, forKey: .status)
        try container.encode(headers.map { [$0.name.rawValue, $0.value] }, forKey: .fields)
        try container.encode(body, forKey: .body)
        try container.encode(varied, forKey: .varied)
        try container.encode(requestTime, forKey: .requestTime)
        try container.encode(responseTime, forKey: .responseTime)
    }

    /// The bytes this entry holds, for a store's size limit: body, fields and a little more.
    public var cost: Int {
        body.count + headers.reduce(0) { $0 + $1.name.rawValue.utf8.count + $1.value.utf8.count + 4 } + varied.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count }
            + url.utf8.count + 64
    }
}

extension CachedResponse: CustomStringConvertible, CustomReflectable {
    /// Status, URL, size and age data; headers redacted the standard way, body not shown.
    public var description: String {
        "CachedResponse(\(status) \(URL(string: url).map { Request.redactedURLString($0) } ?? "<invalid URL>"), \(body.count) bytes, received \(HTTPDate.format(responseTime)))"
    }

    /// For `dump`: the description only (headers can hold `Set-Cookie`, bodies secrets).
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}

/// Where an ``HTTPCache`` keeps responses: memory (``MemoryCacheStore``), a directory
/// (``DiskCacheStore``), or a store of your own (a shared one, say).
///
/// A store holds, for each key URL, the responses that vary on request fields (one per set of
/// varied values). It needs no knowledge of HTTP: the cache decides what to store and serve.
public protocol HTTPCacheStore: Sendable {
    /// The responses stored for `url`, most recent first.
    /// - Parameter url: The key URL.
    /// - Returns: The responses; empty when none.
    func responses(for url: String) async -> [CachedResponse]
    /// Stores `response`, replacing the one for its URL with the same varied values.
    /// - Parameter response: The response.
    func store(_ response: CachedResponse) async
    /// Removes every response stored for `url`.
    /// - Parameter url: The key URL.
    func removeAll(for url: String) async
}
