#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The pages of a paginated resource, fetched one at a time as they are iterated.
///
/// Nothing is sent until the first call to `next()`; each later page is requested only when the
/// previous one has been handed out, so breaking out of the loop stops the fetching. Errors end
/// the sequence with a ``CourierError`` (a page whose link to the next one is unusable is still
/// delivered; the error comes on the step after it); so does cancellation of the iterating task
/// (``CourierError/Cause/cancelled``), and a server that never stops
/// (``CourierError/Cause/tooManyPages(limit:)``) or that links back to a page already fetched
/// (``CourierError/Cause/paginationCycle(page:)``).
///
/// ```swift
/// for try await page in executor.paginate(listUsers, next: .linkHeader()) {
///     render(page.value)
/// }
/// let everyone = try await executor.paginate(listUsers, next: .cursor("after", from: \.nextCursor))
///     .values.reduce(into: []) { $0 += $1.users }
/// ```
public struct Pages<Value: Sendable>: AsyncSequence, Sendable {
    /// Each element is one page.
    public typealias Element = Page<Value>

    let executor: any Executor
    let resource: Resource<Value>
    let strategy: PaginationStrategy<Value>
    let maxPages: Int

    /// The decoded values alone, page by page.
    public var values: AsyncThrowingMapSequence<Pages<Value>, Value> {
        map(\.value)
    }

    /// Starts fetching.
    /// - Returns: The iterator.
    public func makeAsyncIterator() -> Iterator {
        Iterator(pages: self)
    }

    /// Fetches the pages in order.
    public struct Iterator: AsyncIteratorProtocol {
        private let pages: Pages
        private var nextRequest: Request?
        private var fetched = 0
        private var seen: Set<String> = []
        /// Why there is no next page when the last one pointed somewhere unusable: thrown by the
        /// call after the one that delivered that page.
        private var pendingError: CourierError?

        init(pages: Pages) {
            self.pages = pages
            self.nextRequest = pages.resource.request
        }

        /// Fetches and decodes the next page.
        /// - Returns: The page, or `nil` after the last one.
        /// - Throws: ``CourierError``; the sequence ends after an error.
        public mutating func next() async throws -> Page<Value>? {
            if let pendingError {
                self.pendingError = nil
                throw pendingError
            }
            guard let request = nextRequest else { return nil }
            nextRequest = nil
            guard fetched < pages.maxPages else {
                throw CourierError(.tooManyPages(limit: pages.maxPages), request: request)
            }
            if Task.isCancelled { throw CourierError(.cancelled, request: request) }
            // A request identical to one already fetched would loop forever.
            let key = request.pageKey
            guard seen.insert(key).inserted else {
                throw CourierError(.paginationCycle(page: fetched), request: request)
            }
            var resource = pages.resource
            resource.request = request
            let decoded = try await pages.executor.response(for: resource)
            fetched += 1
            let page = Page(value: decoded.value, request: request, response: decoded.response, number: fetched)
            do {
                nextRequest = try pages.strategy.next(page)
            } catch {
                // The page itself is good: deliver it, and fail on the next step.
                pendingError = CourierError.wrapping(error, request: request)
            }
            return page
        }
    }
}

extension Executor {
    /// The pages of `resource`, fetched lazily as the sequence is iterated.
    ///
    /// The first page is `resource`'s own request; `next` finds each following one. See
    /// ``Pages`` for how the sequence ends.
    /// - Parameters:
    ///   - resource: The first page's request and how to decode every page.
    ///   - next: How to find the next page; for example ``PaginationStrategy/linkHeader(relation:)``.
    ///   - maxPages: The most pages to fetch; asking for more throws
    ///     ``CourierError/Cause/tooManyPages(limit:)``. 1,000 by default.
    /// - Returns: The pages.
    public func paginate<Value: Sendable>(
        _ resource: Resource<Value>, next: PaginationStrategy<Value>, maxPages: Int = 1000
    ) -> Pages<Value> {
        Pages(executor: self, resource: resource, strategy: next, maxPages: max(0, maxPages))
    }
}

extension Request {
    /// What identifies a page for cycle detection: method, URL and body.
    fileprivate var pageKey: String {
        "\(method.rawValue) \(urlString(redacting: nil) ?? "") \(body?.base64EncodedString() ?? "")"
    }
}
