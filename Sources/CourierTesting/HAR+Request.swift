import CourierCore
import CourierResilience

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension HAR {
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
}

// Lenient reading: files from other tools often leave out required arrays and sizes. Writing
// always includes every field HAR 1.2 requires.

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
