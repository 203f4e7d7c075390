@_spi(Transports) import CourierCore
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import HTTPTypes

extension Response {
    /// A Courier response from swift-http-types' response, its body and the URL it came from.
    /// The headers are converted when first read.
    /// - Parameters:
    ///   - httpResponse: The response head.
    ///   - body: The body bytes.
    ///   - url: The URL of the response, if known.
    public init(httpResponse: HTTPResponse, body: Data = Data(), url: URL? = nil) {
        let fields = httpResponse.headerFields
        self.init(status: httpResponse.status.code, body: body, url: url) { CourierCore.HTTPHeaders(httpFields: fields) }
    }

    /// This response's head in swift-http-types' form: the status (with its standard reason
    /// phrase where Courier knows it) and the header fields in order, repeats kept.
    /// - Returns: The response head.
    /// - Throws: ``/Courier/CourierError`` with a ``/Courier/TransportFailure/Kind/badResponse``
    ///   failure when the status is not a three-digit code or a header cannot travel unchanged.
    public func httpResponse() throws(CourierError) -> HTTPResponse {
        guard (100...999).contains(status) else {
            throw CourierError(.transport(TransportFailure(.badResponse, message: "the status \(status) is not a three-digit code")))
        }
        let fields: HTTPFields
        do {
            fields = try headers.httpFields()
        } catch {
            throw CourierError(.transport(TransportFailure(.badResponse, message: "a response header cannot be converted: \(error.summary)")))
        }
        return HTTPResponse(status: HTTPResponse.Status(code: status), headerFields: fields)
    }
}
