import CourierCore
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import HTTPTypes

extension Request {
    /// A Courier request from swift-http-types' request and a body: the method, the URL its
    /// scheme, authority and path make, and the header fields in order (repeats kept; fields
    /// marked `.disallow` become sensitive headers).
    ///
    /// The path arrives already percent-encoded and stays exactly as it is.
    /// - Parameters:
    ///   - httpRequest: The request.
    ///   - body: The body, if any.
    /// - Throws: ``/Courier/CourierError`` with ``/Courier/CourierError/Cause/invalidRequest(_:)``
    ///   when the request has no absolute URL (a `CONNECT`, `OPTIONS *`, or a missing scheme or
    ///   authority) or the result would not pass Courier's validation.
    public init(httpRequest: HTTPRequest, body: Data? = nil) throws(CourierError) {
        guard let url = httpRequest.url, url.scheme != nil, url.host != nil else {
            throw CourierError(
                .invalidRequest([RequestProblem(.missingURL, "the HTTPRequest has no absolute URL (scheme, authority and path)")]))
        }
        var request = Request(method: HTTPMethod(rawValue: httpRequest.method.rawValue)) |> CourierCore.url(url.absoluteString)
        request.headers = CourierCore.HTTPHeaders(httpFields: httpRequest.headerFields)
        request.body = body
        try request.validate()
        self = request
    }

    /// This request in swift-http-types' form, validated first (an invalid request is never
    /// converted): method, scheme, authority and the percent-encoded path and query as Courier
    /// sends them, and the header fields in order with sensitive ones (the request's
    /// ``/Courier/Request/redaction`` and standard credentials) marked `.disallow`.
    ///
    /// The body is not part of an `HTTPRequest`: send ``/Courier/Request/body`` (or the
    /// ``/Courier/Request/bodySource``) beside it.
    /// - Returns: The request.
    /// - Throws: ``/Courier/CourierError`` with ``/Courier/CourierError/Cause/invalidRequest(_:)``
    ///   for a request with problems, or one whose URL carries userinfo (an `HTTPRequest`
    ///   authority has no place for credentials: use `basicAuth` instead).
    public func httpRequest() throws(CourierError) -> HTTPRequest {
        let url = try validatedURL()
        guard url.user == nil, url.password == nil else {
            throw CourierError(
                .invalidRequest([
                    RequestProblem(.invalidURL, "the URL carries userinfo, which an HTTPRequest cannot hold; send credentials with basicAuth")
                ]), request: self)
        }
        guard let method = HTTPRequest.Method(method.rawValue) else {
            throw CourierError(.invalidRequest([RequestProblem(.invalidMethod, "the method is not a token")]), request: self)
        }
        let fields: HTTPFields
        do {
            fields = try headers.httpFields(redaction: redaction)
        } catch {
            throw CourierError(error.cause, request: self)
        }
        return HTTPRequest(method: method, url: url, headerFields: fields)
    }
}
