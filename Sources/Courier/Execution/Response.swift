import Foundation

/// A raw HTTP response: status, headers, body and the URL it came from.
///
/// Executors produce responses; a ``Resource`` turns one into a typed value.
public struct Response: Sendable, Hashable {
    /// The status code, for example `200`.
    public var status: Int
    /// The header fields.
    public var headers: HTTPHeaders
    /// The body bytes, after any content decoding (gzip) the transport did.
    public var body: Data
    /// The URL of the response, after redirects; `nil` when the transport does not know it.
    public var url: URL?

    /// Creates a response.
    /// - Parameters:
    ///   - status: The status code.
    ///   - headers: The header fields.
    ///   - body: The body bytes.
    ///   - url: The URL the response came from.
    public init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: Data = Data(), url: URL? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.url = url
    }

    /// The `Content-Type` header parsed as a media type, if present.
    public var contentType: MediaType? {
        headers[.contentType].map(MediaType.init(rawValue:))
    }

    /// Whether the status is in the 2xx range.
    public var isSuccess: Bool { (200..<300).contains(status) }
}
