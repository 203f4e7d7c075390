import CourierCore
import CourierResilience

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Middleware that records every exchange passing through it as a HAR 1.2 entry: request,
/// response, headers, query, bodies (text, or base64 for binary data) and timing. Failed
/// exchanges are recorded too, with status 0 and the error in `_error`.
///
/// Secrets are redacted as ``LoggingMiddleware`` redacts them, by default: sensitive header and
/// cookie values, sensitive query values, URL userinfo, and secret-looking fields in text bodies
/// become `<redacted>`. A body the redactor cannot read (text in another encoding than UTF-8,
/// binary data holding one of the request's secret values) is left out, with a comment saying
/// why. A recording can therefore be attached to a bug report or committed as a test fixture.
///
/// `timings` are the hop's own (``HopTimings``, which the recorder asks the exchange to record):
/// `blocked` is the time before the hop could be written (other middleware, earlier hops of the
/// call when the recorder runs per call, waiting for a pooled connection), then `dns`, `connect`
/// (with `ssl` inside it, as HAR counts it), `send`, `wait` (to the first byte) and `receive`, as
/// far as the transport reports them; `time` is their sum. Without timings (a response a cache
/// answered) the whole exchange is `wait`.
/// ``HARReplayExecutor`` treats a recorded `<redacted>` query value as matching any value.
///
/// ```swift
/// let recorder = HARRecorder()
/// let executor = URLSessionExecutor().with(recorder)
/// _ = try await executor.send(listUsers)
/// try recorder.har.write(to: URL(fileURLWithPath: "users.har"))
/// ```
public final class HARRecorder: HopTimingsObserver {
    /// What to keep of request and response bodies.
    public enum Bodies: Sendable, Hashable {
        /// Text bodies with secret-looking fields redacted; binary bodies in base64, unless they
        /// hold one of the request's secret values (in UTF-8, UTF-16 or UTF-32) or are text in
        /// an encoding other than UTF-8: those are left out, with a comment saying so. The
        /// default.
        case redacted
        /// Bodies exactly as sent and received. Use only where no secret can be in a body.
        case verbatim
        /// No bodies; sizes and media types only.
        case omitted
    }

    private let redaction: Redaction
    private let bodies: Bodies
    private let recorded = Locked<(next: Int, entries: [(order: Int, entry: HAR.Entry)])>((0, []))

    /// Creates a recorder.
    /// - Parameters:
    ///   - redaction: More header and query names to redact, on top of the standard ones and
    ///     each request's own ``Request/redaction``.
    ///   - bodies: What to keep of bodies; ``Bodies/redacted`` by default.
    public init(redaction: Redaction = Redaction(), bodies: Bodies = .redacted) {
        self.redaction = redaction
        self.bodies = bodies
    }

    /// The entries recorded so far, in the order their requests started.
    public var entries: [HAR.Entry] {
        recorded.withLock { $0.entries.sorted { $0.order < $1.order }.map(\.entry) }
    }

    /// The recording as an archive.
    public var har: HAR {
        HAR(log: HAR.Log(entries: entries))
    }

    /// Forgets every entry.
    public func reset() {
        recorded.withLock { $0.entries.removeAll() }
    }

    /// The most bytes of a streamed body kept for the recording; the rest is counted, not kept.
    public static let streamedBodyLimit = 4 << 20

    /// Sends the request through the rest of the chain and records the exchange: at once for a
    /// body in hand; for a streamed body when it ends, with the sizes of the chunks it arrived
    /// in (so ``HARReplayExecutor`` replays it chunk by chunk). At most ``streamedBodyLimit``
    /// bytes of a streamed body are kept; a longer one is recorded cut, with a comment saying so.
    /// - Parameters:
    ///   - request: The request.
    ///   - next: The rest of the chain.
    /// - Returns: The response, unchanged (a streamed body observed).
    /// - Throws: What the rest of the chain throws, unchanged.
    public func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
        let order = nextOrder()
        let started = Date()
        let clock = ContinuousClock()
        let start = clock.now
        let streamed: StreamedResponse
        do {
            streamed = try await next(request)
        } catch {
            let wrapped = CourierError.wrapping(error, request: request)
            record(
                request, response: nil, error: wrapped, started: started, elapsed: clock.now - start, order: order,
                timings: wrapped.timings)
            throw error
        }
        if let body = streamed.body.bufferedData {
            var response = streamed.head
            response.body = body
            record(
                request, response: response, error: nil, started: started, elapsed: clock.now - start, order: order,
                timings: streamed.timings)
            return streamed
        }
        let kept = Locked((body: Data(), chunks: [Int](), total: 0))
        let head = streamed.head
        let hop = streamed
        var observed = streamed
        observed.body = streamed.body.observing(
            chunk: { chunk in
                kept.withLock { kept in
                    kept.total += chunk.count
                    let room = Self.streamedBodyLimit - kept.body.count
                    guard room > 0 else { return }
                    kept.body.append(chunk.prefix(room))
                    kept.chunks.append(min(room, chunk.count))
                }
            },
            end: { [self] ending in
                let (body, chunks, total) = kept.withLock { ($0.body, $0.chunks, $0.total) }
                var response = head
                response.body = body
                var notes: [String] = []
                if total > body.count { notes.append("streamed body cut after \(body.count) of \(total) bytes") }
                switch ending {
                case .complete: break
                case .abandoned: notes.append("the reader stopped after \(total) bytes: the rest of the body was not read")
                case .failed(let error): notes.append("stream ended: \(CourierError.wrapping(error, request: request).summary)")
                }
                record(
                    request, response: response, error: nil, started: started, elapsed: clock.now - start, order: order,
                    chunks: chunks, comment: notes.isEmpty ? nil : notes.joined(separator: "; "), truncated: total > body.count,
                    timings: hop.timings)
            })
        return observed
    }

    /// The position of an exchange that starts now, so entries keep the order requests started.
    private func nextOrder() -> Int {
        recorded.withLock { state in
            defer { state.next += 1 }
            return state.next
        }
    }

    private func record(
        _ request: Request, response: Response?, error: CourierError?, started: Date, elapsed: Duration, order: Int,
        chunks: [Int]? = nil, comment: String? = nil, truncated: Bool = false, timings: HopTimings? = nil
    ) {
        var policy = request
        policy.redaction = request.redaction.merging(redaction)
        let entry = HARConversion(
            redaction: policy.redaction, bodies: bodies, redactor: BodyRedactor(request: request, extra: redaction),
            echoes: SecretEchoes(request: request, extra: redaction), truncatedResponse: truncated
        )
        .entry(for: policy, response: response, error: error, started: started, elapsed: elapsed, timings: timings)
        var annotated = entry
        if let chunks {
            annotated.response.content._chunks = chunks
            // After the stream's own notes, any the conversion made (a body left out).
            let notes = [comment, annotated.response.content.comment].compactMap { $0 }
            annotated.response.content.comment = notes.isEmpty ? nil : notes.joined(separator: "; ")
        }
        recorded.withLock { $0.entries.append((order, annotated)) }
    }
}

/// Turns Courier values into HAR entries.
struct HARConversion {
    var redaction: Redaction
    var bodies: HARRecorder.Bodies
    /// Hides secrets in text bodies: the request's own names and values, not a fixed list.
    var redactor: BodyRedactor
    /// The request's secret values, hidden where a response header echoes them, and looked for
    /// in bodies the redactor cannot read.
    var echoes: SecretEchoes
    /// Decides whether a body the redactor cannot read (not UTF-8 text) is kept in base64.
    var unreadable: UnreadableBodyCheck { UnreadableBodyCheck(echoes: echoes) }
    /// Whether the response body is the start of a longer (streamed) one: its end may be the
    /// start of a secret, or a character cut in two.
    var truncatedResponse = false

    func entry(
        for request: Request, response: Response?, error: CourierError?, started: Date, elapsed: Duration, timings hop: HopTimings? = nil
    ) -> HAR.Entry {
        let rounded = HAR.Timings.milliseconds(elapsed)
        let timings = hop.map { HAR.Timings($0, startedBy: $0.startedAt.timeIntervalSince(started), elapsed: elapsed) }
            ?? HAR.Timings(send: 0, wait: rounded, receive: 0)
        var entry = HAR.Entry(
            startedDateTime: started.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)),
            time: hop == nil ? rounded : timings.total, request: harRequest(request),
            response: response.map(harResponse) ?? HAR.EntryResponse(
                status: 0, statusText: "", headers: [], content: HAR.Content(size: 0, mimeType: "", text: nil)),
            timings: timings)
        entry._error = error?.summary
        return entry
    }

    func harRequest(_ request: Request) -> HAR.EntryRequest {
        let url = request.urlString(redacting: redaction) ?? ""
        let headers = redacted(request.headers)
        var harRequest = HAR.EntryRequest(
            method: request.method.rawValue, url: url, headers: headers, queryString: Self.queryPairs(of: url),
            postData: request.body.map { postData($0, type: request.headers[.contentType]) })
        harRequest.cookies = request.headers.values(for: .cookie).flatMap { cookies(fromCookieHeader: $0) }
        harRequest.bodySize = request.body?.count ?? 0
        return harRequest
    }

    /// The response as HAR records it: a header that echoes one of the request's secrets is
    /// hidden like a sensitive one, and so is a cookie whose line echoes one.
    func harResponse(_ response: Response) -> HAR.EntryResponse {
        let type = response.headers[.contentType] ?? ""
        let (text, encoding, withheld) = content(response.body, type: type, truncated: truncatedResponse)
        var harResponse = HAR.EntryResponse(
            status: response.status, statusText: HTTPStatusText.phrase(for: response.status),
            headers: redacted(echoes.marking(response.headers)),
            content: HAR.Content(size: response.body.count, mimeType: echoes.shown(type), text: text, encoding: encoding))
        harResponse.content.comment = withheld
        harResponse.cookies = response.headers.values(for: .setCookie).compactMap { line in
            echoes.occur(in: line)
                ? HAR.Cookie(name: Redaction.placeholder, value: Redaction.placeholder) : cookie(fromSetCookie: line)
        }
        return harResponse
    }

    private func redacted(_ headers: HTTPHeaders) -> [HAR.NameValue] {
        redaction.redacting(headers).map { HAR.NameValue(name: $0.name.rawValue, value: $0.value) }
    }

    private var hidesCookies: Bool { redaction.isSensitive(header: .cookie) || redaction.isSensitive(header: .setCookie) }

    private func postData(_ body: Data, type: String?) -> HAR.PostData {
        let mimeType = type ?? ""
        let (text, encoding, withheld) = content(body, type: mimeType)
        var params: [HAR.Param] = []
        if let text, encoding == nil, MediaType(rawValue: mimeType).matches(.formURLEncoded) {
            params = Self.pairs(inQuery: Substring(text)).map { HAR.Param(name: $0.name, value: $0.value) }
        }
        var data = HAR.PostData(mimeType: mimeType, text: text ?? "", params: params, encoding: encoding)
        if bodies == .omitted { data.comment = "body of \(body.count) bytes not recorded" }
        if let withheld { data.comment = withheld }
        return data
    }

    /// The body as HAR text: UTF-8 text (redacted unless verbatim), base64 for binary data, or
    /// nothing when bodies are omitted.
    /// A cut text body loses the character cut in two, rather than turn into base64 (which no
    /// redaction reads). When redacting, a body the redactor cannot read is kept only where
    /// ``UnreadableBodyCheck`` allows; otherwise it is left out, and `withheld` says why.
    private func content(_ body: Data, type: String, truncated: Bool = false)
        -> (text: String?, encoding: String?, withheld: String?)
    {
        guard bodies != .omitted, !body.isEmpty else { return (bodies == .omitted ? nil : "", nil, nil) }
        for cut in 0...(truncated ? min(3, body.count) : 0) {
            if let text = String(data: body.dropLast(cut), encoding: .utf8), !text.contains("\0") {
                return (bodies == .redacted ? redactor.redact(text, truncated: truncated) : text, nil, nil)
            }
        }
        if bodies == .redacted, let reason = unreadable.reasonToWithhold(body, type: type, truncated: truncated) {
            return (nil, nil, "body of \(body.count) bytes not recorded: \(reason)")
        }
        return (body.base64EncodedString(), "base64", nil)
    }

    private func cookies(fromCookieHeader value: String) -> [HAR.Cookie] {
        // Bytes, never Characters: `;` and a combining mark after it are one Character.
        HTTPSyntax.parts(of: value, separatedBy: UInt8(ascii: ";")).compactMap { pair in
            let (name, value) = HTTPSyntax.nameAndValue(of: pair)
            guard !name.isEmpty else { return nil }
            return HAR.Cookie(name: name, value: hidesCookies ? Redaction.placeholder : value ?? "")
        }
    }

    private func cookie(fromSetCookie value: String) -> HAR.Cookie? {
        let attributes = HTTPSyntax.parts(of: value, separatedBy: UInt8(ascii: ";")).map(HTTPSyntax.nameAndValue)
        guard let first = attributes.first, let firstValue = first.value else { return nil }
        var cookie = HAR.Cookie(name: first.name, value: hidesCookies ? Redaction.placeholder : firstValue)
        for attribute in attributes.dropFirst() {
            switch HTTPSyntax.asciiLowercased(attribute.name) {
            case "path": cookie.path = attribute.value
            case "domain": cookie.domain = attribute.value
            case "expires": cookie.expires = attribute.value
            case "httponly": cookie.httpOnly = true
            case "secure": cookie.secure = true
            default: break
            }
        }
        return cookie
    }

    /// The decoded query parameters of a URL string.
    static func queryPairs(of url: String) -> [HAR.NameValue] {
        var rest = Substring(url)
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        guard let mark = rest.firstIndex(of: "?") else { return [] }
        return pairs(inQuery: rest[rest.index(after: mark)...]).map { HAR.NameValue(name: $0.name, value: $0.value) }
    }

    /// `a=1&b=2` as decoded pairs (`+` is a space, as in forms and most servers' queries).
    static func pairs(inQuery query: Substring) -> [(name: String, value: String)] {
        query.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ part: Substring) -> String {
                PercentEncoding.decode(Substring(part.replacingAll("+", with: " ")))
            }
            return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
        }
    }
}
