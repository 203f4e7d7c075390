#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A raw HTTP response: status, headers, body and the URL it came from.
///
/// Executors produce responses; a ``Resource`` turns one into a typed value.
public struct Response: Sendable, Hashable {
    /// The status code, for example `200`.
    public var status: Int
    /// The header fields.
    ///
    /// A response from a network transport converts the transport's headers the first time they
    /// are read (most callers only decode the body, and the conversion is most of what Courier
    /// does per live request); every copy of the response shares that one conversion.
    public var headers: HTTPHeaders {
        get {
            switch headerStorage {
            case .converted(let headers): headers
            case .deferred(let deferred): deferred.headers
            }
        }
        set { headerStorage = .converted(newValue) }
    }
    /// The headers, or the transport's to convert them from when first read.
    var headerStorage: HeaderStorage
    /// The body bytes, after any content decoding (gzip) the transport did.
    public var body: Data
    /// The URL of the response, after redirects; `nil` when the transport does not know it.
    public var url: URL? {
        get {
            switch location {
            case .parsed(let url): url
            case .unparsed(let string): URL(string: string)
            }
        }
        set { location = .parsed(newValue) }
    }
    /// The URL, or the string a transport had, parsed when first read (most callers never read it).
    var location: Location

    /// Creates a response.
    /// - Parameters:
    ///   - status: The status code.
    ///   - headers: The header fields.
    ///   - body: The body bytes.
    ///   - url: The URL the response came from.
    public init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: Data = Data(), url: URL? = nil) {
        self.status = status
        self.headerStorage = .converted(headers)
        self.body = body
        self.location = .parsed(url)
    }

    /// Creates a response whose headers are converted from a transport's own form only when
    /// first read, once for every copy (most callers decode the body and never read a header),
    /// and which answers a question about one field without converting them all: the core asks
    /// every response for `Content-Length` and `Content-Encoding`, and a redirect for its
    /// `Location`. For Courier's own transports; not part of the public API.
    /// - Parameters:
    ///   - status: The status code.
    ///   - body: The body bytes.
    ///   - url: The URL the response came from, or `nil` when `urlString` is given.
    ///   - urlString: The URL as a string, parsed only when ``url`` is first read (parsing one
    ///     costs more than the rest of a small response's head).
    ///   - field: The first value of the named field in the transport's own form, if any; names
    ///     match case-insensitively.
    ///   - headers: Makes the header fields; called at most once.
    @_spi(Transports)
    public init(
        status: Int, body: Data = Data(), url: URL? = nil, urlString: String? = nil,
        field: (@Sendable (HeaderName) -> String?)? = nil, headers: @escaping @Sendable () -> HTTPHeaders
    ) {
        self.status = status
        self.headerStorage = .deferred(DeferredHeaders(headers, field: field))
        self.body = body
        self.location = urlString.map { .unparsed($0) } ?? .parsed(url)
    }

    public static func == (lhs: Response, rhs: Response) -> Bool {
        lhs.status == rhs.status && lhs.url == rhs.url && lhs.body == rhs.body && lhs.headers == rhs.headers
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(status)
        hasher.combine(url)
        hasher.combine(body)
        hasher.combine(headers)
    }

    /// The `Content-Type` header parsed as a media type, if present.
    public var contentType: MediaType? {
        headers[.contentType].map(MediaType.init(rawValue:))
    }

    /// Whether the status is in the 2xx range.
    public var isSuccess: Bool { (200..<300).contains(status) }
}

extension Response {
    /// Where a response's headers are.
    enum Location: Sendable {
        case parsed(URL?)
        case unparsed(String)
    }

    enum HeaderStorage: Sendable {
        /// Already Courier's.
        case converted(HTTPHeaders)
        /// Still the transport's, converted once on first read.
        case deferred(DeferredHeaders)
    }

    /// The first value of the field `name`, read without converting every header when the
    /// transport can answer for one.
    package func firstValue(of name: HeaderName) -> String? {
        switch headerStorage {
        case .converted(let headers): headers[name]
        case .deferred(let deferred): deferred.firstValue(of: name)
        }
    }

    /// Headers made by a transport's conversion the first time they are read, and kept for every
    /// copy of the response. `@unchecked Sendable` is sound: the closure is `@Sendable` and
    /// constant, and the cached result is read and written only inside its lock.
    final class DeferredHeaders: @unchecked Sendable {
        private let make: @Sendable () -> HTTPHeaders
        /// Answers for one field in the transport's own form, when the transport can.
        private let field: (@Sendable (HeaderName) -> String?)?
        private let converted = Locked<HTTPHeaders?>(nil)

        init(_ make: @escaping @Sendable () -> HTTPHeaders, field: (@Sendable (HeaderName) -> String?)? = nil) {
            self.make = make
            self.field = field
        }

        /// The first value of `name`: from the transport's lookup when there is one, otherwise
        /// from the conversion (made now if need be).
        func firstValue(of name: HeaderName) -> String? {
            if let field { return field(name) }
            return headers[name]
        }

        var headers: HTTPHeaders {
            converted.withLock { cached in
                if let cached { return cached }
                let headers = make()
                cached = headers
                return headers
            }
        }
    }

    /// This response with its header values hidden where `redaction` says so. Headers that are
    /// still the transport's stay unconverted until read.
    func redactingHeaders(with redaction: Redaction) -> Response {
        var shown = self
        switch headerStorage {
        case .converted(let headers):
            shown.headerStorage = .converted(redaction.redacting(headers))
        case .deferred(let deferred):
            shown.headerStorage = .deferred(DeferredHeaders { redaction.redacting(deferred.headers) })
        }
        return shown
    }

    /// The `Content-Length` the server declared, when it is a valid one; read without converting
    /// the headers when the transport can answer for one field.
    var declaredContentLength: Int? {
        firstValue(of: .contentLength).flatMap(Self.contentLength)
    }

    /// The length a `Content-Length` field value declares: digits only, around optional
    /// whitespace, that fit an `Int` ([RFC 9110 §8.6](https://www.rfc-editor.org/rfc/rfc9110#section-8.6));
    /// `nil` for anything else (a sign, a list, a fraction, an overflow). The one
    /// `Content-Length` parser: the framing check, ``StreamedResponse/expectedLength`` and
    /// transports that read a field themselves use it.
    /// - Parameter value: The field's value.
    /// - Returns: The declared length.
    public static func contentLength(_ value: String) -> Int? {
        var length = 0
        var digits = 0
        var trailing = false
        for byte in value.utf8 {
            if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") {
                if digits > 0 { trailing = true }
                continue
            }
            guard !trailing, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (times10, overflow) = length.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
            guard !overflow, !overflow2 else { return nil }
            length = sum
            digits += 1
        }
        return digits > 0 ? length : nil
    }
}
