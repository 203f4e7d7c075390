import AsyncHTTPClient
@_spi(Transports) import CourierCore
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// Sends one hop with AsyncHTTPClient: the ``/Courier/Transport`` under
/// ``AsyncHTTPClientExecutor``.
///
/// It keeps what is AsyncHTTPClient's own: rendering the request for it, inflating `gzip` and
/// `deflate` bodies piece by piece (so the exchange's size limit bounds memory), and mapping its
/// errors. A redirect is handed back as the response; the ``/Courier/Exchange`` follows it, and
/// holds every body to the size limit, the framing check and the idle timer. The client must
/// leave redirects, decompression and tracing to Courier
/// (``AsyncHTTPClientExecutor/clientConfiguration(_:)``).
public struct AsyncHTTPClientTransport: Transport {
    /// The client requests go through; owned by the caller.
    public let client: HTTPClient

    /// Creates a transport over `client`.
    /// - Parameter client: A client you own, made with
    ///   ``AsyncHTTPClientExecutor/clientConfiguration(_:)`` or configured the same way; you shut
    ///   it down when done.
    /// - Throws: ``AsyncHTTPClientExecutor/ConfigurationError`` when the client follows
    ///   redirects, decompresses bodies or traces requests itself.
    public init(client: HTTPClient) throws {
        let problems = ClientInspection.problems(of: client)
        guard problems.isEmpty else { throw AsyncHTTPClientExecutor.ConfigurationError(problems: problems) }
        self.client = client
    }

    /// A transport over a client this package configured itself (``AsyncHTTPClientExecutor/shared``).
    init(configuredClient client: HTTPClient) {
        self.client = client
    }

    /// Sends `request`, one hop, and returns once its head arrives (a redirect's included).
    ///
    /// With ``/Courier/StreamOptions/buffersBody`` the body is gathered here, in hand; otherwise it
    /// streams through a ``/Courier/ByteStream`` with backpressure.
    /// - Parameters:
    ///   - request: The request.
    ///   - options: How the body is delivered.
    /// - Returns: The head and the body.
    /// - Throws: ``/Courier/CourierError``.
    public func send(hop request: Request, options: StreamOptions) async throws -> StreamedResponse {
        let (prepared, url) = try Self.prepare(request, progress: options.uploadProgress, isValid: options.hopIsValid)
        let response: HTTPClientResponse
        do {
            response = try await client.execute(prepared, deadline: .distantFuture)
        } catch {
            throw TransportErrors.courierError(for: error, request: request)
        }
        if let timings = options.timings {
            // What AsyncHTTPClient tells: when the head came, the protocol, and (in the body
            // reader) when the body ended. Its connections' phases stay inside it.
            timings.mark(.firstByte)
            timings.connection(nil, protocol: response.version.major >= 2 ? "h2" : "http/1.1")
        }
        if response.history.count > 1 {
            // A client that follows redirects itself slipped past the check at init.
            let problem = AsyncHTTPClientExecutor.ConfigurationError(problems: ["follows redirects"]).description
            throw CourierError(.transport(TransportFailure(.redirectFailed, message: problem)), request: request)
        }
        let headers = response.headers
        // The URL is parsed, and the headers converted, only if someone reads them.
        let head = Response(
            status: Int(response.status.code), urlString: url, field: { headers.first(name: $0.rawValue) },
            headers: { Self.convert(headers) })
        let body = BodyReader(response: response, head: head, method: request.method, request: request, timings: options.timings)
        if options.buffersBody {
            return StreamedResponse(head: head, body: ByteStream(try await body.collect()))
        }
        return StreamedResponse(head: head, body: body.stream(bufferLimit: options.bufferLimit))
    }

    /// Response headers in Courier's form, in the order they arrived, repeats kept.
    static func convert(_ headers: NIOHTTP1.HTTPHeaders) -> CourierCore.HTTPHeaders {
        var fields: [CourierCore.HTTPHeaders.Field] = []
        fields.reserveCapacity(headers.count)
        for (name, value) in headers { fields.append(.init(name: HeaderName(rawValue: name), value: value)) }
        return CourierCore.HTTPHeaders(fields)
    }
}
