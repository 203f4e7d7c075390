import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How a request uses the URL loading system's cache.
///
/// A portable mirror of `URLRequest.CachePolicy`, so a ``Request`` stays a plain `Sendable`,
/// `Hashable` value on every platform.
public enum CachePolicy: Sendable, Hashable, CaseIterable {
    /// Use the protocol's default caching logic.
    case useProtocolCachePolicy
    /// Ignore any cached data and load from the origin.
    case reloadIgnoringLocalCacheData
    /// Use cached data when present, whatever its age; otherwise load from the origin.
    case returnCacheDataElseLoad
    /// Use cached data only; fail when there is none.
    case returnCacheDataDontLoad

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
