@_spi(Transports) import CourierCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What an ``HTTPCache`` keeps and how it finds it again: the stored fields, the update a `304`
/// makes (RFC 9111 §3.2, §4.3.4), keys, and `Vary` matching (§4.1).
extension HTTPCache {
    /// The entry with the header fields of a `304` (RFC 9111 §3.2): every field replaced,
    /// `ETag` and `Content-Encoding` included, but `Content-Length`, the fields a stored response
    /// never keeps (the connection's, `Set-Cookie`) and those the `304`'s `Cache-Control` names in
    /// `no-cache="…"`.
    ///
    /// `Content-Encoding` is the one field read against the body held: it is taken when the
    /// stored body still carries a coding (one no transport undoes, kept as it came), and left
    /// alone when the body held is plain (sent plain, or decoded on arrival), since a coding
    /// named then would mislabel the bytes (RFC 9111 §3.2 lets a cache that stores the result of
    /// decoding keep such a field).
    static func updated(_ entry: CachedResponse, with notModified: Response, requestTime: Date, responseTime: Date, mode: Mode = .private) -> CachedResponse {
        var headers = entry.headers
        let fresh = storedHeaders(notModified.headers, mode: mode)
        let bodyIsEncoded = entry.headers.contains(.contentEncoding)
        for name in Set(fresh.map(\.name)) where name != .contentLength && name != .cacheStatus && (name != .contentEncoding || bodyIsEncoded) {
            headers.remove(name)
            for value in fresh.values(for: name) { headers.add(name, value) }
        }
        var updated = entry
        updated.headers = headers
        updated.requestTime = requestTime
        updated.responseTime = responseTime
        return updated
    }

    /// Fields a stored response does not keep: the connection's, the encoding the transport
    /// undid, `Set-Cookie`, any earlier `Cache-Status`, and those its `Cache-Control` names in
    /// `no-cache="…"` (RFC 9111 §5.2.2.4: never sent from the cache without validating) or, in a
    /// shared cache, in `private="…"` (§5.2.2.7). `Age` is kept: it is the age the response
    /// already had when it arrived (RFC 9111 §4.2.3's `age_value`), which every later age counts
    /// from; a served response gets its own.
    static func storedHeaders(_ headers: HTTPHeaders, mode: Mode = .private) -> HTTPHeaders {
        var kept = headers
        let connection = headers.values(for: HeaderName(rawValue: "Connection"))
            .flatMap { HTTPSyntax.parts(of: $0, separatedBy: UInt8(ascii: ",")) }.filter { !$0.isEmpty }.map { HeaderName(rawValue: $0) }
        let said = CacheControl(headers.values(for: .cacheControl))
        let withheld = (said.noCacheFields + (mode == .shared ? said.privateFields : [])).map { HeaderName(rawValue: $0) }
        for name in connection + withheld + Self.unstoredFields { kept.remove(name) }
        if wasDecoded(headers.values(for: .contentEncoding)) { kept.remove(.contentEncoding) }
        return kept
    }

    static let unstoredFields: [HeaderName] = [
        "Connection", "Keep-Alive", "Proxy-Connection", "TE", "Transfer-Encoding", "Upgrade", "Trailer", "Proxy-Authenticate",
        .setCookie, .cacheStatus,
    ]

    /// The codings a transport undoes before the body reaches middleware (AsyncHTTPClient's
    /// transport: `gzip` and `deflate`; URLSession: those, `br` and `zstd` through libcurl).
    static let decodedCodings: Set<String> = ["gzip", "x-gzip", "deflate", "br", "zstd", "identity"]

    /// Whether a body with these `Content-Encoding` values reached the cache decoded: every coding
    /// named is one a transport undoes. A coding none knows (`Content-Encoding: x-custom`) leaves
    /// the body as the server sent it, and the stored response keeps the field that says so.
    static func wasDecoded(_ values: [String]) -> Bool {
        let codings = values.flatMap { HTTPSyntax.parts(of: $0, separatedBy: UInt8(ascii: ",")) }.map(HTTPSyntax.asciiLowercased).filter { !$0.isEmpty }
        return codings.allSatisfy(decodedCodings.contains)
    }

    // MARK: Keys and Vary

    /// The key for `url`: its absolute string without a fragment.
    static func key(_ url: URL) -> String {
        let string = url.absoluteString
        guard let hash = string.firstIndex(of: "#") else { return string }
        return String(string[..<hash])
    }

    /// The request fields `headers`' `Vary` names, normalised: lowercase names; values of
    /// repeated fields joined with `, `, runs of blanks made one space, trimmed.
    static func variedFields(_ headers: HTTPHeaders, request: Request) -> [String: String] {
        var varied: [String: String] = [:]
        for value in headers.values(for: .vary) {
            for name in HTTPSyntax.parts(of: value, separatedBy: UInt8(ascii: ",")) {
                let name = name.lowercased()
                guard !name.isEmpty else { continue }
                let values = request.headers.values(for: HeaderName(rawValue: name))
                if !values.isEmpty { varied[name] = normalised(values) }
            }
        }
        return varied
    }

    private static func normalised(_ values: [String]) -> String {
        values.map { $0.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ") }.joined(separator: ", ")
    }

    /// Whether `request` has the field values `entry` was stored for (RFC 9111 §4.1).
    static func matchesVary(_ entry: CachedResponse, request: Request) -> Bool {
        let names = entry.headers.values(for: .vary).flatMap { HTTPSyntax.parts(of: $0, separatedBy: UInt8(ascii: ",")) }
            .map { $0.lowercased() }.filter { !$0.isEmpty }
        if names.contains("*") { return false }
        for name in names {
            let values = request.headers.values(for: HeaderName(rawValue: name))
            let now: String? = values.isEmpty ? nil : normalised(values)
            if now != entry.varied[name] { return false }
        }
        return true
    }

    /// An entity tag compared weakly: without its `W/` prefix.
    static func weakTag(_ tag: String) -> String {
        let trimmed = tag.trimmingOptionalWhitespace()
        return trimmed.hasPrefix("W/") ? String(trimmed.dropFirst(2)) : trimmed
    }
}
