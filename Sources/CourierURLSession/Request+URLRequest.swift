import CourierCore
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension Request {
    /// Renders the Foundation request that URLSession sends.
    ///
    /// Headers that repeat a name are joined by `, ` as Foundation does. A file body
    /// (``upload(_:contentType:)``) becomes the request's `httpBodyStream`, sent with chunked
    /// transfer coding and no `Content-Length` (which would frame it twice); other body sources are
    /// read at send time by an executor and cannot be rendered.
    /// - Returns: The `URLRequest`.
    /// - Throws: ``CourierError`` with cause ``CourierError/Cause/invalidRequest(_:)`` when the
    ///   request has problems; nothing is rendered then.
    public func urlRequest() throws(CourierError) -> URLRequest {
        try urlRequest(attachingBodySource: true)
    }

    /// Renders the Foundation request; with `attachingBodySource` false, a ``bodySource`` is left
    /// for the executor to upload (``URLSessionExecutor`` uploads it from a file). With
    /// `isValid`, the exchange validated the request already and it is only rendered.
    func urlRequest(attachingBodySource: Bool, isValid: Bool = false) throws(CourierError) -> URLRequest {
        var request = URLRequest(url: try hopURL(isValid: isValid))
        // The setter normalises the method through case-insensitive string compares: skip it for
        // the default, GET.
        if method != .get { request.httpMethod = method.rawValue }
        // One dictionary assignment instead of a setValue per field: FoundationNetworking's
        // setValue searches the existing fields case-insensitively and re-validates the value
        // each time (over ten times the cost). Names are unique here and values already
        // validated by `url()`.
        var fields: [String: String] = Dictionary(minimumCapacity: headers.count)
        // Repeated names joined by the core's one rule; by index: reading the two strings in
        // place spares copying each field.
        let all = headers.joinedFields
        for index in all.indices { fields[all[index].name.rawValue] = all[index].value }
        if !fields.isEmpty { request.allHTTPHeaderFields = fields }
        request.httpBody = body
        if attachingBodySource, let bodySource {
            // A file can travel as a body stream; other sources need an executor that reads them
            // at send time.
            guard case .file(let file) = bodySource.storage, file.isFileURL, let stream = InputStream(url: file) else {
                throw CourierError(
                    .invalidRequest([
                        RequestProblem(
                            .bodyEncodingFailed,
                            "a body of \(bodySource) is read while the request is sent, which a URLRequest cannot carry; "
                                + "send it with URLSessionExecutor (or InMemoryExecutor, HARReplayExecutor)")
                    ]), request: self)
            }
            request.httpBodyStream = stream
            // A body stream goes out with chunked transfer coding (FoundationNetworking's libcurl
            // chunks it whatever the headers say): a Content-Length beside it would frame the
            // body twice, which RFC 9112 §6.3 forbids.
            request.setValue(nil, forHTTPHeaderField: "Content-Length")
        }
        if let timeout = transportTimeout { request.timeoutInterval = timeout }
        if let cachePolicy { request.cachePolicy = cachePolicy.urlRequestPolicy }
        return request
    }

    /// The timeout to put on the `URLRequest`: a backstop behind the ``Exchange``'s idle timer,
    /// which enforces the exact value on every transport.
    ///
    /// FoundationNetworking truncates `timeoutInterval` to whole seconds (0.5 s would become a
    /// timer that fires at once), so there the value is rounded up.
    var transportTimeout: TimeInterval? {
        guard let timeout = effectiveTimeout else { return nil }
        #if canImport(FoundationNetworking)
            return timeout.rounded(.up)
        #else
            return timeout
        #endif
    }
}

extension CachePolicy {
    /// The Foundation equivalent.
    public var urlRequestPolicy: URLRequest.CachePolicy {
        switch self {
        case .useProtocolCachePolicy: .useProtocolCachePolicy
        case .reloadIgnoringLocalCacheData: .reloadIgnoringLocalCacheData
        case .returnCacheDataElseLoad: .returnCacheDataElseLoad
        case .returnCacheDataDontLoad: .returnCacheDataDontLoad
        }
    }
}
