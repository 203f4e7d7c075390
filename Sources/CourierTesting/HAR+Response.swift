import CourierCore
import CourierResilience

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension HAR {
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
}

// Lenient reading: files from other tools often leave out required arrays and sizes. Writing
// always includes every field HAR 1.2 requires.

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
