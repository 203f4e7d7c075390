#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif


/// How a request uses the URL loading system's cache.
///
/// A portable mirror of `URLRequest.CachePolicy`, so a ``Request`` stays a plain `Sendable`,
/// `Hashable` value on every platform.
///
/// It applies where the transport has a cache: `URLSession` on Apple platforms. On Linux
/// `URLSessionTransport` runs without a `URLCache` (FoundationNetworking traps when a task is
/// cancelled during its cache lookup) and AsyncHTTPClient has none, so there every request is
/// loaded from the origin.
public enum CachePolicy: Sendable, Hashable, CaseIterable {
    /// Use the protocol's default caching logic.
    case useProtocolCachePolicy
    /// Ignore any cached data and load from the origin.
    case reloadIgnoringLocalCacheData
    /// Use cached data when present, whatever its age; otherwise load from the origin.
    case returnCacheDataElseLoad
    /// Use cached data only; fail when there is none.
    case returnCacheDataDontLoad
}
