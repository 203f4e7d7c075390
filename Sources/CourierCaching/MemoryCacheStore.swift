import CourierCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An ``HTTPCacheStore`` in memory, bounded by the bytes it holds: the least recently used URL's
/// responses go first when a new one would pass the limit.
///
/// ```swift
/// let cache = HTTPCache(store: MemoryCacheStore(maximumSize: 20 << 20))
/// ```
public final class MemoryCacheStore: HTTPCacheStore {
    private struct State {
        var entries: [String: [CachedResponse]] = [:]
        /// Use order: a larger stamp is more recent.
        var used: [String: UInt64] = [:]
        var stamp: UInt64 = 0
        var size = 0
    }

    private let state = Locked(State())
    /// The most bytes (``CachedResponse/cost``) the store holds.
    public let maximumSize: Int

    /// Creates a store.
    /// - Parameter maximumSize: The most bytes it holds; 10 MiB by default. Negative counts as
    ///   `0` (nothing is kept).
    public init(maximumSize: Int = 10 << 20) {
        self.maximumSize = Swift.max(0, maximumSize)
    }

    /// The bytes held now.
    public var size: Int { state.withLock { $0.size } }

    /// The responses stored for `url`, most recent first; marks the URL used.
    /// - Parameter url: The key URL.
    /// - Returns: The responses.
    public func responses(for url: String) async -> [CachedResponse] {
        state.withLock { state in
            guard let found = state.entries[url] else { return [] }
            state.stamp += 1
            state.used[url] = state.stamp
            return found
        }
    }

    /// Stores `response`, replacing the one with its URL and varied values; evicts the least
    /// recently used URLs while the store is over its size. A response larger than the whole
    /// store is not kept.
    /// - Parameter response: The response.
    public func store(_ response: CachedResponse) async {
        let cost = response.cost
        state.withLock { state in
            var list = state.entries[response.url] ?? []
            if let index = list.firstIndex(where: { $0.varied == response.varied }) {
                state.size -= list[index].cost
                list.remove(at: index)
            }
            guard cost <= maximumSize else {
                state.entries[response.url] = list.isEmpty ? nil : list
                if list.isEmpty { state.used[response.url] = nil }
                return
            }
            list.insert(response, at: 0)
            state.entries[response.url] = list
            state.size += cost
            state.stamp += 1
            state.used[response.url] = state.stamp
            while state.size > maximumSize, let oldest = state.used.filter({ $0.key != response.url }).min(by: { $0.value < $1.value })?.key {
                state.size -= state.entries[oldest]?.reduce(0) { $0 + $1.cost } ?? 0
                state.entries[oldest] = nil
                state.used[oldest] = nil
            }
            while state.size > maximumSize, var own = state.entries[response.url], own.count > 1 {
                state.size -= own.removeLast().cost
                state.entries[response.url] = own
            }
        }
    }

    /// Removes every response stored for `url`.
    /// - Parameter url: The key URL.
    public func removeAll(for url: String) async {
        state.withLock { state in
            state.size -= state.entries[url]?.reduce(0) { $0 + $1.cost } ?? 0
            state.entries[url] = nil
            state.used[url] = nil
        }
    }
}
