@_spi(Transports) import CourierCore
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
        // Foundation's headers stay unconverted until read; one field is looked up in place.
        let headers = FoundationHeaders(http)
        self.init(status: http.statusCode, body: body, url: http.url, field: headers.value, headers: headers.convert)
    }
}

/// Foundation's response headers as the core reads them: one field looked up in place, or all
/// converted to ``HTTPHeaders`` (once, when first read, for every copy of the response).
///
/// `@unchecked Sendable` is sound: the response is only read (Foundation does not change a
/// delivered response).
struct FoundationHeaders: @unchecked Sendable {
    let response: HTTPURLResponse

    init(_ response: HTTPURLResponse) { self.response = response }

    /// The first value of `name`.
    @Sendable func value(_ name: HeaderName) -> String? {
        response.value(forHTTPHeaderField: name.rawValue)
    }

    /// One pass: each name is lower-cased once (by HeaderName), values are read as the strings
    /// they are, and the sort (for a stable order; the dictionary has none) compares the stored
    /// lower-case names.
    @Sendable func convert() -> HTTPHeaders {
        let all = response.allHeaderFields
        var fields: [HTTPHeaders.Field] = []
        fields.reserveCapacity(all.count)
        for (key, value) in all {
            // Through `base`: a cast from `Any` is cheaper than one from `AnyHashable`.
            guard let name = key.base as? String else { continue }
            let header = HeaderName(rawValue: name)
            let text = value as? String ?? "\(value)"
            if header == .setCookie {
                // Foundation joins repeated fields with commas; each cookie is a field of its own.
                for cookie in HTTPSyntax.splitJoinedSetCookie(text) { fields.append(HTTPHeaders.Field(name: header, value: cookie)) }
            } else {
                fields.append(HTTPHeaders.Field(name: header, value: text))
            }
        }
        fields.sort { $0.name.canonical < $1.name.canonical }
        return HTTPHeaders(fields)
    }
}
