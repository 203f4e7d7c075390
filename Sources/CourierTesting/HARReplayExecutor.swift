@_spi(Transports) import CourierCore
import CourierResilience

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An executor that answers from a HAR recording, with no network: for offline tests and demos
/// built from real traffic.
///
/// A request matches an entry with the same method and URL; query parameters may come in any
/// order, and a recorded `<redacted>` value matches any value. With `matchingBodies`, the body
/// must match too. Several entries for the same request are answered in recorded order, the
/// last one repeating, so a recorded sequence (a list before and after a create, say) replays
/// as it happened. A request nothing matches fails with
/// ``CourierError/Cause/unanswered(_:)``, naming the closest entry and how it differs.
/// An entry recorded as a failure (status 0) is replayed as a transport failure.
///
/// ```swift
/// let replay = try HARReplayExecutor(contentsOf: fixtureURL)
/// let users = try await replay.send(listUsers)
/// ```
public struct HARReplayExecutor: Executor {
    /// The exchange every call runs through, over the recording.
    public var exchange: Exchange
    /// The recording and how often each entry was used; shared by copies.
    private let recording: HARReplayTransport

    /// Creates an executor that answers from an archive.
    /// - Parameters:
    ///   - har: The recording.
    ///   - matchingBodies: Whether a request's body must equal the recorded one (compared after
    ///     redaction when the recording's body was redacted). `false` by default.
    ///   - redirects: How a recorded redirect is followed; ``RedirectPolicy/follow`` by default
    ///     (a recording made per hop replays its redirect chain).
    public init(_ har: HAR, matchingBodies: Bool = false, redirects: RedirectPolicy = .follow) {
        recording = HARReplayTransport(har, matchingBodies: matchingBodies)
        exchange = Exchange(transport: recording, redirects: redirects)
    }

    /// Creates an executor that answers from a HAR file.
    /// - Parameters:
    ///   - url: The file's URL.
    ///   - matchingBodies: Whether bodies must match too.
    ///   - redirects: How a recorded redirect is followed; ``RedirectPolicy/follow`` by default.
    /// - Throws: ``CourierError`` with cause ``CourierError/Cause/invalidRecording(_:)`` when the
    ///   file cannot be read or is not HAR.
    public init(contentsOf url: URL, matchingBodies: Bool = false, redirects: RedirectPolicy = .follow) throws(CourierError) {
        self.init(try HAR(contentsOf: url), matchingBodies: matchingBodies, redirects: redirects)
    }

    /// The entries no request has been answered with yet: after a test, a non-empty list means
    /// the code under test made fewer calls than were recorded.
    public var unusedEntries: [HAR.Entry] { recording.unusedEntries }
}

/// The transport of a ``HARReplayExecutor``: each hop answered from the recording.
final class HARReplayTransport: Transport {
    private struct Candidate: Sendable {
        var index: Int
        var entry: HAR.Entry
        var key: RecordedRequestKey
    }

    private let candidates: [Candidate]
    private let matchingBodies: Bool
    private let uses: Locked<[Int]>

    init(_ har: HAR, matchingBodies: Bool) {
        candidates = har.log.entries.enumerated().map { index, entry in
            Candidate(index: index, entry: entry, key: RecordedRequestKey(method: entry.request.method, url: entry.request.url))
        }
        self.matchingBodies = matchingBodies
        uses = Locked(Array(repeating: 0, count: har.log.entries.count))
    }

    var unusedEntries: [HAR.Entry] {
        uses.withLock { uses in candidates.filter { uses[$0.index] == 0 }.map(\.entry) }
    }

    /// Answers `request` with the matching recorded response: in hand when the caller reads the
    /// body whole (``StreamOptions/buffersBody``) or it was recorded whole, otherwise chunk by
    /// chunk as it was recorded (see `HAR.Content._chunks`).
    /// Throws ``CourierError`` with cause ``CourierError/Cause/unanswered(_:)`` when no
    /// entry matches, ``CourierError/Cause/invalidRecording(_:)`` for an entry whose body cannot
    /// be decoded, or ``CourierError/Cause/transport(_:)`` for an entry recorded as a failure.
    func send(hop request: Request, options: StreamOptions) async throws -> StreamedResponse {
        let (response, chunkSizes) = try await replay(request, isValid: options.hopIsValid)
        guard !options.buffersBody, let chunkSizes, !chunkSizes.isEmpty else { return StreamedResponse(response) }
        var chunks: [Data] = []
        var offset = response.body.startIndex
        for size in chunkSizes where size > 0 && offset < response.body.endIndex {
            let end = response.body.index(offset, offsetBy: min(size, response.body.endIndex - offset))
            chunks.append(response.body[offset..<end])
            offset = end
        }
        if offset < response.body.endIndex { chunks.append(response.body[offset...]) }
        return StreamedResponse(head: response, body: ByteStream(chunks: chunks))
    }

    private func replay(_ request: Request, isValid: Bool) async throws -> (response: Response, chunks: [Int]?) {
        let url = try request.hopURL(isValid: isValid)
        let key = RecordedRequestKey(method: request.method.rawValue, url: url.absoluteString)
        let matches = candidates.filter { $0.key.matches(key) && (!matchingBodies || bodyMatches($0.entry, request)) }
        guard !matches.isEmpty else {
            throw CourierError(.unanswered(explainMiss(key, request: request)), request: request)
        }
        let chosen = uses.withLock { uses -> Candidate in
            let candidate = matches.first { uses[$0.index] == 0 } ?? matches[matches.count - 1]
            uses[candidate.index] += 1
            return candidate
        }
        try Task.checkCancellation()
        return (try response(from: chosen, url: url, request: request), chosen.entry.response.content._chunks)
    }

    private func response(from candidate: Candidate, url: URL, request: Request) throws(CourierError) -> Response {
        let recorded = candidate.entry.response
        guard recorded.status != 0 else {
            throw CourierError(
                .transport(TransportFailure(.other, message: "recorded failure: \(candidate.entry._error ?? "no response")")),
                request: request)
        }
        var headers = HTTPHeaders()
        for field in recorded.headers { headers.add(HeaderName(rawValue: field.name), field.value) }
        let body: Data
        if recorded.content.text == nil {
            body = Data()
        } else if let data = recorded.content.data {
            body = data
        } else {
            throw CourierError(
                .invalidRecording("entry \(candidate.index): the response content is marked base64 but is not valid base64"),
                request: request)
        }
        // A recording keeps the body as text, decoded and perhaps redacted (a secret replaced by
        // a shorter placeholder): the length it arrived with no longer frames it.
        if headers.contains(.contentLength) { headers.set(.contentLength, String(body.count)) }
        return Response(status: recorded.status, headers: headers, body: body, url: url)
    }

    private func bodyMatches(_ entry: HAR.Entry, _ request: Request) -> Bool {
        let sent = request.body ?? Data()
        guard let postData = entry.request.postData else { return sent.isEmpty }
        guard let recorded = postData.data else { return false }
        if recorded == sent || Self.sameJSON(recorded, sent) { return true }
        // A redacted recording: redact what is sent the same way before comparing.
        guard postData._encoding == nil, postData.text.contains(Redaction.placeholder),
            let text = String(data: sent, encoding: .utf8)
        else { return false }
        let redacted = Data(BodyRedactor(request: request).redact(text).utf8)
        return redacted == recorded || Self.sameJSON(recorded, redacted)
    }

    /// Whether two bodies are the same JSON value: encoders need not keep key order (Linux's
    /// does not), so JSON is compared as values.
    private static func sameJSON(_ a: Data, _ b: Data) -> Bool {
        guard let left = JSONValue.decode(a) else { return false }
        return left == JSONValue.decode(b)
    }

    /// Says why nothing matched, naming the closest entry; query values the request's
    /// redaction hides are never shown.
    private func explainMiss(_ key: RecordedRequestKey, request: Request) -> String {
        let shown = "\(request.method.rawValue) \(request.urlString(redacting: request.redaction) ?? key.path)"
        guard !candidates.isEmpty else { return "the recording has no entries; \(shown) was not recorded" }
        let closest = candidates.max { $0.key.similarity(to: key) < $1.key.similarity(to: key) } ?? candidates[0]
        var differences = closest.key.differences(from: key, redaction: request.redaction)
        if differences.isEmpty && matchingBodies { differences = ["the body differs"] }
        return "\(shown) matches no recorded entry; the closest is entry \(closest.index), "
            + "\(closest.entry.request.method) \(closest.entry.request.url): " + differences.joined(separator: "; ")
    }
}

/// What a request is matched on: method, origin, path and the query as a multiset.
struct RecordedRequestKey: Sendable, Hashable {
    var method: String
    var scheme: String
    var host: String
    var port: Int?
    var path: String
    var query: [HAR.NameValue]

    /// Splits a URL string by hand, because a recorded URL may hold `<redacted>`, which
    /// `URL(string:)` rejects.
    init(method: String, url: String) {
        self.method = method
        var rest = Substring(url)
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        var scheme = ""
        if let range = rest.firstRange(of: "://") {
            scheme = HTTPSyntax.asciiLowercased(String(rest[..<range.lowerBound]))
            rest = rest[range.upperBound...]
        }
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        rest = rest[authorityEnd...]
        var host = authority
        var port: Int?
        if let colon = authority.lastIndex(of: ":"), !authority[colon...].contains("]") {
            host = authority[..<colon]
            port = Int(authority[authority.index(after: colon)...])
        }
        let defaultPort = scheme == "https" ? 443 : scheme == "http" ? 80 : nil
        self.scheme = scheme
        self.host = HTTPSyntax.asciiLowercased(String(host))
        self.port = port == defaultPort ? nil : port
        let pathEnd = rest.firstIndex(of: "?") ?? rest.endIndex
        let path = PercentEncoding.decode(rest[..<pathEnd])
        self.path = path.isEmpty ? "/" : path
        self.query = pathEnd < rest.endIndex ? HARConversion.queryPairs(of: String(rest)) : []
    }

    func matches(_ sent: RecordedRequestKey) -> Bool {
        method == sent.method && scheme == sent.scheme && host == sent.host && port == sent.port && path == sent.path
            && Self.sameQuery(query, sent.query)
    }

    func similarity(to other: RecordedRequestKey) -> Int {
        var score = 0
        if method == other.method { score += 4 }
        if scheme == other.scheme && host == other.host && port == other.port { score += 4 }
        if path == other.path {
            score += 8
        } else {
            let mine = path.split(separator: "/")
            let theirs = other.path.split(separator: "/")
            score += zip(mine, theirs).prefix { $0.0 == $0.1 }.count
        }
        score += query.filter { pair in other.query.contains { $0.name == pair.name } }.count
        score += query.filter { other.query.contains($0) }.count
        return score
    }

    func differences(from sent: RecordedRequestKey, redaction: Redaction) -> [String] {
        var found: [String] = []
        if method != sent.method { found.append("method \(method) was recorded, \(sent.method) was sent") }
        if scheme != sent.scheme || host != sent.host || port != sent.port {
            found.append("origin \(scheme)://\(host)\(port.map { ":\($0)" } ?? "") was recorded, "
                + "\(sent.scheme)://\(sent.host)\(sent.port.map { ":\($0)" } ?? "") was sent")
        }
        if path != sent.path { found.append("path \(path) was recorded, \(sent.path) was sent") }
        func show(_ pairs: [HAR.NameValue]) -> String {
            pairs.isEmpty
                ? "none"
                : pairs.map { "\($0.name)=\(redaction.isSensitive(queryName: $0.name) ? Redaction.placeholder : $0.value)" }
                    .joined(separator: "&")
        }
        if !RecordedRequestKey.sameQuery(query, sent.query) {
            found.append("query \(show(query)) was recorded, \(show(sent.query)) was sent")
        }
        return found
    }

    /// Whether the queries hold the same pairs in any order; a recorded `<redacted>` value
    /// matches any value.
    private static func sameQuery(_ recorded: [HAR.NameValue], _ sent: [HAR.NameValue]) -> Bool {
        guard recorded.count == sent.count else { return false }
        var remaining = sent
        for pair in recorded {
            guard
                let index = remaining.firstIndex(where: {
                    $0.name == pair.name && (pair.value == Redaction.placeholder || $0.value == pair.value)
                })
            else { return false }
            remaining.remove(at: index)
        }
        return true
    }
}
