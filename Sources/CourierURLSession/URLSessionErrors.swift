import CourierCore
import Foundation

/// URLSession's errors as Courier's: what only this transport needs to read. The codes every
/// `URLError` carries are mapped by the core (``CourierCore/CourierError/wrapping(_:request:)``,
/// for stubs and any transport that reports a `URLError`); FoundationNetworking's libcurl
/// failures also need their text read, which is this transport's business.
enum URLSessionErrors {
    /// `error` as a ``CourierError`` with `request` attached: a libcurl failure by its text,
    /// anything else as the core maps it.
    static func courierError(for error: any Error, request: Request?) -> CourierError {
        let mapped = CourierError.wrapping(error, request: request)
        guard case .transport(let failure) = mapped.cause, let error = error as? URLError else { return mapped }
        // A TLS failure, whatever code FoundationNetworking gave it (-1 for a certificate it does
        // not accept, a lost connection for a client certificate the server required).
        if failure.tlsProblem == nil, let problem = tlsProblem(error, overTLS: request?.baseURL?.scheme?.lowercased() == "https") {
            return CourierError(.transport(.tls(problem, code: error.code.rawValue)), request: request, underlyingError: error)
        }
        guard failure.kind == .other, let (kind, message) = curlFailure(error) else { return mapped }
        return CourierError(.transport(TransportFailure(kind, code: error.code.rawValue, message: message)), request: request, underlyingError: error)
    }

    /// The TLS problem libcurl's text names ("SSL certificate problem: certificate has expired",
    /// "… alert certificate required"), if it names one. FoundationNetworking reports every
    /// certificate failure as `URLError` code -1 with that text.
    ///
    /// Over TLS, libcurl's "getpeername() failed" means the server closed the connection right
    /// after the handshake, before any request byte: what a server that requires a client
    /// certificate does with TLS 1.3 (its refusal comes after the client finished), and not a
    /// lost connection a retry would fix.
    static func tlsProblem(_ error: URLError, overTLS: Bool = false) -> TLSProblem? {
        guard let text = error.userInfo[NSLocalizedDescriptionKey] as? String else {
            return error.code == .secureConnectionFailed ? .handshake("secureConnectionFailed") : nil
        }
        if let problem = TLSProblem.fromOpenSSL(text) { return problem }
        if overTLS, text.contains("getpeername() failed") {
            return .handshake("the server closed the connection right after it, before the request; a server that requires a client certificate does this")
        }
        return error.code == .secureConnectionFailed ? .handshake("secureConnectionFailed") : nil
    }

    /// FoundationNetworking reports some libcurl failures (codes the core calls ``CourierCore/TransportFailure/Kind/other``) as `URLError(.unknown)` or
    /// `URLError(.unsupportedURL)` with curl's own text: a body cut short ("transfer closed with
    /// 60 bytes remaining to read"), a compressed body that does not decode ("Error while
    /// processing content unencoding: …"), and a response head that is not HTTP ("Unsupported
    /// response code in HTTP response" for a status below 100, "Unsupported HTTP version in
    /// response", "Received HTTP/0.9 when not allowed" for a body after an informational
    /// head). Those texts name no URL; they are kept as the message.
    static func curlFailure(_ error: URLError) -> (TransportFailure.Kind, String)? {
        guard let text = error.userInfo[NSLocalizedDescriptionKey] as? String else { return nil }
        let message = String(text.prefix(200))
        if text.hasPrefix("transfer closed with") || text.contains("end of response with") {
            return (.truncatedBody, message)
        }
        if text.contains("content unencoding") || text.contains("Unrecognized content encoding") {
            return (.badResponse, message)
        }
        if text.contains("in HTTP response") || text.contains("HTTP version in response") || text.contains("HTTP/0.9")
            || text.contains("Weird server reply") || text.contains("Invalid status line")
        {
            return (.badResponse, message)
        }
        return nil
    }
}
