import Foundation

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

    /// A name and a value: a header or a query parameter.
    public struct NameValue: Codable, Sendable, Hashable {
        /// The name.
        public var name: String
        /// The value.
        public var value: String
        /// A comment.
        public var comment: String?

        /// Creates a pair.
        /// - Parameters:
        ///   - name: The name.
        ///   - value: The value.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// A cookie sent or set.
    public struct Cookie: Codable, Sendable, Hashable {
        /// The name.
        public var name: String
        /// The value.
        public var value: String
        /// The path.
        public var path: String?
        /// The domain.
        public var domain: String?
        /// The expiry, in ISO 8601.
        public var expires: String?
        /// Whether the cookie is HTTP-only.
        public var httpOnly: Bool?
        /// Whether the cookie is sent over secure connections only.
        public var secure: Bool?
        /// A comment.
        public var comment: String?

        /// Creates a cookie.
        /// - Parameters:
        ///   - name: The name.
        ///   - value: The value.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The request of an entry.
    public struct EntryRequest: Codable, Sendable, Hashable {
        /// The method.
        public var method: String
        /// The absolute URL, fragment removed.
        public var url: String
        /// The protocol version, for example `HTTP/1.1`.
        public var httpVersion: String
        /// The cookies of the `Cookie` header.
        public var cookies: [Cookie]
        /// The headers, in order.
        public var headers: [NameValue]
        /// The query parameters of the URL, decoded.
        public var queryString: [NameValue]
        /// The body, when there is one.
        public var postData: PostData?
        /// The size of the header block in bytes; -1 when unknown.
        public var headersSize: Int
        /// The size of the body in bytes; 0 without a body.
        public var bodySize: Int
        /// A comment.
        public var comment: String?

        /// Creates a request.
        /// - Parameters:
        ///   - method: The method.
        ///   - url: The absolute URL.
        ///   - headers: The headers.
        ///   - queryString: The decoded query parameters.
        ///   - postData: The body.
        public init(method: String, url: String, headers: [NameValue], queryString: [NameValue], postData: PostData?) {
            self.method = method
            self.url = url
            self.httpVersion = "HTTP/1.1"
            self.cookies = []
            self.headers = headers
            self.queryString = queryString
            self.postData = postData
            self.headersSize = -1
            self.bodySize = postData?.byteCount ?? 0
        }
    }

    /// A request body.
    public struct PostData: Codable, Sendable, Hashable {
        /// The body's media type.
        public var mimeType: String
        /// The fields of a form body, decoded.
        public var params: [Param]
        /// The body as text, or in base64 when `_encoding` says so.
        public var text: String
        /// `"base64"` when ``text`` holds a binary body in base64 (HAR 1.2 has no field for
        /// this; Courier adds it as a custom field).
        public var _encoding: String?
        /// A comment.
        public var comment: String?

        /// Creates a body.
        /// - Parameters:
        ///   - mimeType: The media type.
        ///   - text: The text, or base64.
        ///   - params: Decoded form fields.
        ///   - encoding: `"base64"` for a base64 ``text``.
        public init(mimeType: String, text: String, params: [Param] = [], encoding: String? = nil) {
            self.mimeType = mimeType
            self.text = text
            self.params = params
            self._encoding = encoding
        }

        /// The body's bytes, decoding base64 when marked.
        public var data: Data? {
            _encoding == "base64" ? Data(base64Encoded: text) : Data(text.utf8)
        }

        var byteCount: Int { data?.count ?? text.utf8.count }
    }

    /// A posted form field.
    public struct Param: Codable, Sendable, Hashable {
        /// The name.
        public var name: String
        /// The value.
        public var value: String?
        /// The file name, for an uploaded file.
        public var fileName: String?
        /// The file's content type.
        public var contentType: String?
        /// A comment.
        public var comment: String?

        /// Creates a field.
        /// - Parameters:
        ///   - name: The name.
        ///   - value: The value.
        public init(name: String, value: String?) {
            self.name = name
            self.value = value
        }
    }

    /// The response of an entry.
    public struct EntryResponse: Codable, Sendable, Hashable {
        /// The status code; 0 when the exchange failed without a response.
        public var status: Int
        /// The reason phrase.
        public var statusText: String
        /// The protocol version.
        public var httpVersion: String
        /// The cookies of the `Set-Cookie` headers.
        public var cookies: [Cookie]
        /// The headers, in order.
        public var headers: [NameValue]
        /// The body.
        public var content: Content
        /// The `Location` header's value, or `""`.
        public var redirectURL: String
        /// The size of the header block in bytes; -1 when unknown.
        public var headersSize: Int
        /// The size of the body as received in bytes; -1 when unknown.
        public var bodySize: Int
        /// A comment.
        public var comment: String?

        /// Creates a response.
        /// - Parameters:
        ///   - status: The status code.
        ///   - statusText: The reason phrase.
        ///   - headers: The headers.
        ///   - content: The body.
        public init(status: Int, statusText: String, headers: [NameValue], content: Content) {
            self.status = status
            self.statusText = statusText
            self.httpVersion = "HTTP/1.1"
            self.cookies = []
            self.headers = headers
            self.content = content
            self.redirectURL = headers.first { HTTPSyntax.asciiLowercased($0.name) == "location" }?.value ?? ""
            self.headersSize = -1
            self.bodySize = content.size
        }
    }

    /// A response body.
    public struct Content: Codable, Sendable, Hashable {
        /// The size of the decoded body in bytes.
        public var size: Int
        /// Bytes saved by compression, when known.
        public var compression: Int?
        /// The body's media type, from `Content-Type`; `""` when absent.
        public var mimeType: String
        /// The body as text, or in base64 when ``encoding`` is `"base64"`; absent when the body
        /// was not recorded.
        public var text: String?
        /// `"base64"` for a binary body.
        public var encoding: String?
        /// A comment.
        public var comment: String?
        /// The sizes of the chunks a streamed body arrived in (a Courier extension), so that
        /// ``HARReplayExecutor`` replays a stream chunk by chunk; absent for buffered bodies.
        public var _chunks: [Int]?

        /// Creates a body.
        /// - Parameters:
        ///   - size: The size in bytes.
        ///   - mimeType: The media type.
        ///   - text: The text, or base64.
        ///   - encoding: `"base64"` for a base64 ``text``.
        public init(size: Int, mimeType: String, text: String?, encoding: String? = nil) {
            self.size = size
            self.mimeType = mimeType
            self.text = text
            self.encoding = encoding
        }

        /// The body's bytes, or `nil` when the body was not recorded or its base64 is invalid.
        public var data: Data? {
            guard let text else { return nil }
            return encoding == "base64" ? Data(base64Encoded: text) : Data(text.utf8)
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
            throw CourierError(.invalidRecording("cannot read \(url.path): \(error.localizedDescription)"), underlyingError: error)
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
            throw CourierError(.invalidRecording("cannot write \(url.path): \(error.localizedDescription)"), underlyingError: error)
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

extension HAR.EntryRequest {
    /// Reads a request; only `method` and `url` are needed.
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError` when `method` or `url` is missing.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        method = try container.decode(String.self, forKey: .method)
        url = try container.decode(String.self, forKey: .url)
        httpVersion = try container.decodeIfPresent(String.self, forKey: .httpVersion) ?? "HTTP/1.1"
        cookies = try container.decodeIfPresent([HAR.Cookie].self, forKey: .cookies) ?? []
        headers = try container.decodeIfPresent([HAR.NameValue].self, forKey: .headers) ?? []
        queryString = try container.decodeIfPresent([HAR.NameValue].self, forKey: .queryString) ?? []
        postData = try container.decodeIfPresent(HAR.PostData.self, forKey: .postData)
        headersSize = try container.decodeIfPresent(Int.self, forKey: .headersSize) ?? -1
        bodySize = try container.decodeIfPresent(Int.self, forKey: .bodySize) ?? -1
        comment = try container.decodeIfPresent(String.self, forKey: .comment)
    }
}

extension HAR.PostData {
    /// Reads a body; `params` and `text` may be missing, and the HAR 1.3 draft's `encoding`
    /// is read like `_encoding`.
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError` for a field of the wrong type.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        mimeType = try container.decodeIfPresent(String.self, forKey: .mimeType) ?? ""
        params = try container.decodeIfPresent([HAR.Param].self, forKey: .params) ?? []
        text = try container.decodeIfPresent(String.self, forKey: .text) ?? ""
        let draft = try decoder.container(keyedBy: DraftKeys.self)
        _encoding = try container.decodeIfPresent(String.self, forKey: ._encoding)
            ?? draft.decodeIfPresent(String.self, forKey: .encoding)
        comment = try container.decodeIfPresent(String.self, forKey: .comment)
    }

    private enum DraftKeys: String, CodingKey {
        case encoding
    }
}

extension HAR.EntryResponse {
    /// Reads a response; only `status` is needed.
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError` when `status` is missing.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        status = try container.decode(Int.self, forKey: .status)
        statusText = try container.decodeIfPresent(String.self, forKey: .statusText) ?? ""
        httpVersion = try container.decodeIfPresent(String.self, forKey: .httpVersion) ?? "HTTP/1.1"
        cookies = try container.decodeIfPresent([HAR.Cookie].self, forKey: .cookies) ?? []
        headers = try container.decodeIfPresent([HAR.NameValue].self, forKey: .headers) ?? []
        content = try container.decodeIfPresent(HAR.Content.self, forKey: .content)
            ?? HAR.Content(size: 0, mimeType: "", text: nil)
        redirectURL = try container.decodeIfPresent(String.self, forKey: .redirectURL) ?? ""
        headersSize = try container.decodeIfPresent(Int.self, forKey: .headersSize) ?? -1
        bodySize = try container.decodeIfPresent(Int.self, forKey: .bodySize) ?? -1
        comment = try container.decodeIfPresent(String.self, forKey: .comment)
    }
}
