import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension Response {
    /// Creates a response from Foundation's.
    /// - Parameters:
    ///   - http: The HTTP response.
    ///   - body: The body bytes.
    public init(http: HTTPURLResponse, body: Data) {
        self.init(status: http.statusCode, body: body, url: http.url)
        headerStorage = .foundation(PendingHeaders(http))
    }

    /// Foundation's response headers, converted to ``HTTPHeaders`` once, when first read, and
    /// kept for every copy of the response.
    ///
    /// `@unchecked Sendable` is sound: the stored properties are constants, the response is only
    /// read (Foundation does not change a delivered response), and the cached conversion is read
    /// and written only inside its lock.
    final class PendingHeaders: @unchecked Sendable {
        /// Read only; Foundation never changes a response once it is delivered.
        let response: HTTPURLResponse
        /// Applied after converting, for copies shown in logs.
        let redaction: Redaction?
        private let converted = Locked<HTTPHeaders?>(nil)

        init(_ response: HTTPURLResponse, redaction: Redaction? = nil) {
            self.response = response
            self.redaction = redaction
        }

        var headers: HTTPHeaders {
            converted.withLock { cached in
                if let cached { return cached }
                var headers = Self.convert(response)
                if let redaction { headers = redaction.redacting(headers) }
                cached = headers
                return headers
            }
        }

        /// One pass: each name is lower-cased once (by HeaderName), values are read as the
        /// strings they are, and the sort (for a stable order; the dictionary has none) compares
        /// the stored lower-case names.
        static func convert(_ http: HTTPURLResponse) -> HTTPHeaders {
            let all = http.allHeaderFields
            var fields: [HTTPHeaders.Field] = []
            fields.reserveCapacity(all.count)
            for (key, value) in all {
                // Through `base`: a cast from `Any` is cheaper than one from `AnyHashable`.
                guard let name = key.base as? String else { continue }
                fields.append(HTTPHeaders.Field(name: HeaderName(rawValue: name), value: value as? String ?? "\(value)"))
            }
            fields.sort { $0.name.canonical < $1.name.canonical }
            return HTTPHeaders(fields)
        }
    }
}
