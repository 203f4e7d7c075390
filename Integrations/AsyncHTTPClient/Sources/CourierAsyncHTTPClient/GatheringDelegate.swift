import AsyncHTTPClient
@_spi(Transports) import CourierCore
import NIOCore
import NIOHTTP1

/// A response gathered whole on AsyncHTTPClient's event loop: its head and its raw (still coded)
/// body, `nil` when it had none.
struct GatheredResponse: Sendable {
    var head: HTTPResponseHead
    var body: ByteBuffer?
}

/// Gathers one hop's response on AsyncHTTPClient's event loop through its delegate API, held to
/// the exchange's rules (``/Courier/GathersUnderRules``) as the bytes arrive: each head and piece
/// is activity for the idle timer, and past the size limit the hop fails with the error that
/// keeps the head, and AsyncHTTPClient closes the connection. The caller waits once, for the
/// whole response: no task and no stream per hop, and the timer can stop the hop
/// (``HTTPClient/Task/cancel()``), which AsyncHTTPClient's async API allows only by cancelling
/// the caller's task.
///
/// Every method but ``init`` runs on the request's event loop (AsyncHTTPClient calls a delegate
/// there, one call at a time), so its state needs no lock: hence `@unchecked Sendable`.
final class GatheringDelegate: HTTPClientResponseDelegate, @unchecked Sendable {
    typealias Response = GatheredResponse

    private let rules: BodyRules?
    private let timings: HopTimings.Recorder?
    private let url: String
    private var head: HTTPResponseHead?
    private var body: ByteBuffer?
    /// The most raw bytes gathered for this response, once its head is in.
    private var limit: Int?
    /// Response heads seen: more than one means the client followed a redirect itself.
    private(set) var visits = 0

    init(rules: BodyRules?, timings: HopTimings.Recorder?, url: String) {
        self.rules = rules
        self.timings = timings
        self.url = url
    }

    func didVisitURL(task: HTTPClient.Task<Response>, _ request: HTTPClient.Request, _ head: HTTPResponseHead) {
        visits += 1
    }

    func didReceiveHead(task: HTTPClient.Task<Response>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        rules?.noteActivity()
        timings?.mark(.firstByte)
        self.head = head
        limit = Self.gatherLimit(rules?.maximumSize, coded: head.headers.contains(name: "content-encoding"))
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Response>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        rules?.noteActivity()
        let total = (body?.readableBytes ?? 0) + buffer.readableBytes
        if let limit, total > limit, let rules, let head {
            // AsyncHTTPClient fails the task with this and closes the connection.
            return task.eventLoop.makeFailedFuture(rules.tooLarge(head: AsyncHTTPClientTransport.response(status: head.status, headers: head.headers, url: url)))
        }
        if body == nil {
            body = buffer
        } else {
            body?.writeImmutableBuffer(buffer)
        }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveError(task: HTTPClient.Task<Response>, _ error: any Error) {
        if head != nil { timings?.mark(.bodyEnded) }
    }

    func didFinishRequest(task: HTTPClient.Task<Response>) throws -> Response {
        timings?.mark(.bodyEnded)
        guard let head else { throw HTTPClientError.remoteConnectionClosed }
        return GatheredResponse(head: head, body: body)
    }

    /// Whether a failure came after the response's head (a cut body, not a lost connection).
    var receivedHead: Bool { head != nil }

    /// The most raw bytes to gather under a size limit of `maximum`: the limit itself, or, for a
    /// coded body (decoded once gathered), the limit with room for the coding's framing (gzip and
    /// deflate never grow data by more, so a coded body past it decodes past the limit too; the
    /// decoded bytes are held to the limit itself).
    static func gatherLimit(_ maximum: Int?, coded: Bool) -> Int? {
        guard let maximum else { return nil }
        guard coded else { return maximum }
        return maximum > Int.max / 2 ? Int.max : maximum + maximum / 512 + 64
    }
}
