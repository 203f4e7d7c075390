#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Where a response came from when it went through an ``HTTPCache``: read from the
/// `Cache-Status` field the cache adds ([RFC 9211](https://www.rfc-editor.org/rfc/rfc9211)), so
/// logs, metrics and HAR recordings show it too.
#if hasAttribute(nonexhaustive)
    @nonexhaustive
#endif
public enum CacheStatus: String, Sendable, Hashable {
    /// Served from the cache, fresh, with no request to the origin.
    case hit
    /// Served from the cache after the origin said it was still good (`304`).
    case revalidated
    /// Served from the cache though stale: the origin failed or could not be reached and the
    /// response allowed it (`stale-if-error`, or the cache's offline policy), or it is being
    /// revalidated in the background (`stale-while-revalidate`).
    case stale
    /// Fetched from the origin: nothing usable was stored, or the stored one was replaced.
    case miss

    /// The name of the cache in `Cache-Status`.
    package static let cacheName = "Courier"

    /// The `Cache-Status` member for this status: `hit` (with a negative `ttl` when served
    /// stale without asking the origin), `fwd=stale; fwd-status=304` when revalidated,
    /// `fwd=stale; detail=…` when a stale one answered for a failed origin; for a response from
    /// the origin, `fwd=miss`, or `fwd=stale; fwd-status=N` when a stale stored response was
    /// being revalidated and the origin sent a new one (RFC 9211 §2.2).
    package func field(ttl: Int?, stored: Bool = false, detail: String? = nil, replacedStale status: Int? = nil) -> String {
        var parts = [Self.cacheName]
        switch self {
        case .hit: parts.append("hit")
        case .stale: parts.append(detail == nil ? "hit" : "fwd=stale")
        case .revalidated: parts += ["fwd=stale", "fwd-status=304"]
        case .miss: parts += status.map { ["fwd=stale", "fwd-status=\($0)"] } ?? ["fwd=miss"]
        }
        if let ttl { parts.append("ttl=\(ttl)") }
        if stored { parts.append("stored") }
        if let detail { parts.append("detail=\(detail)") }
        return parts.joined(separator: "; ")
    }

    /// The status Courier's member of a `Cache-Status` field gives, if any.
    static func parse(_ value: String) -> CacheStatus? {
        for member in HTTPSyntax.parts(of: value, separatedBy: UInt8(ascii: ",")) {
            let parameters = HTTPSyntax.parts(of: member, separatedBy: UInt8(ascii: ";"))
            guard parameters.first == cacheName else { continue }
            if parameters.contains("fwd-status=304") { return .revalidated }
            if parameters.contains("hit") {
                let ttl = parameters.first { $0.hasPrefix("ttl=") }.flatMap { Int($0.dropFirst(4)) }
                return (ttl ?? 0) < 0 ? .stale : .hit
            }
            // A stale response the origin replaced came from the origin: fetched, not served stale.
            if parameters.contains("fwd=stale") { return parameters.contains { $0.hasPrefix("fwd-status=") } ? .miss : .stale }
            if parameters.contains(where: { $0.hasPrefix("fwd=") }) { return .miss }
        }
        return nil
    }
}

extension Response {
    /// Whether this response came from an ``HTTPCache``, was revalidated or missed; `nil` when
    /// no cache saw it. Cheap when no cache did: one field is looked up, the headers are not
    /// converted.
    public var cacheStatus: CacheStatus? {
        guard let first = firstValue(of: .cacheStatus) else { return nil }
        if let status = CacheStatus.parse(first) { return status }
        return headers.values(for: .cacheStatus).lazy.compactMap(CacheStatus.parse).first
    }
}

extension StreamedResponse {
    /// Whether this response came from an ``HTTPCache``, was revalidated or missed; `nil` when
    /// no cache saw it.
    public var cacheStatus: CacheStatus? { head.cacheStatus }
}
