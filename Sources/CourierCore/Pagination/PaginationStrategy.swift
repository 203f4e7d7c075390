#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One fetched page: the decoded value with the request that fetched it and the response.
public struct Page<Value: Sendable>: Sendable {
    /// The decoded value.
    public var value: Value
    /// The request that fetched the page.
    public var request: Request
    /// The response, with its headers (for example `Link`) and URL.
    public var response: Response
    /// The page's position, counting from 1.
    public var number: Int

    /// Creates a page; useful for testing a strategy on its own.
    /// - Parameters:
    ///   - value: The decoded value.
    ///   - request: The request that fetched it.
    ///   - response: The response.
    ///   - number: The position, counting from 1.
    public init(value: Value, request: Request, response: Response, number: Int) {
        self.value = value
        self.request = request
        self.response = response
        self.number = number
    }
}

/// How to find the request for the page after a given one; `nil` ends the pagination.
///
/// Ready-made strategies cover the common APIs: ``linkHeader(relation:)`` (RFC 8288), a
/// ``cursor(_:from:)`` read from the body, ``offset(_:pageSize:count:)`` and
/// ``pageNumber(_:startingAt:isLast:)``. ``custom(_:)`` takes any rule.
public struct PaginationStrategy<Value: Sendable>: Sendable {
    /// Returns the next page's request, or `nil` after the last page.
    public typealias Next = @Sendable (Page<Value>) throws -> Request?

    /// The rule.
    public let next: Next

    /// Creates a strategy from a rule.
    /// - Parameter next: Returns the next request, or `nil` after the last page. An error it
    ///   throws ends the pagination with that error.
    public init(_ next: @escaping Next) {
        self.next = next
    }

    /// A strategy from any rule, for APIs the ready-made ones do not fit.
    /// - Parameter next: Returns the next request, or `nil` after the last page.
    /// - Returns: The strategy.
    public static func custom(_ next: @escaping Next) -> PaginationStrategy {
        PaginationStrategy(next)
    }

    /// Follows the response's `Link` header
    /// ([RFC 8288](https://www.rfc-editor.org/rfc/rfc8288)) with the given relation type:
    /// `Link: <https://api.test/items?page=3>; rel="next"`. A relative target is resolved against
    /// the response's URL. Pagination ends when there is no such link.
    ///
    /// The next request keeps the method and headers; when the link leaves the origin, sensitive
    /// headers (credentials and cookies, see ``Redaction``) are removed, as on a redirect.
    /// - Parameter relation: The relation type; `next` by default.
    /// - Returns: The strategy.
    public static func linkHeader(relation: String = "next") -> PaginationStrategy {
        PaginationStrategy { page in
            let wanted = HTTPSyntax.asciiLowercased(relation)
            guard let link = page.response.links.first(where: { $0.relations.contains(wanted) }) else { return nil }
            return try page.request.following(reference: link.target, base: page.response.url ?? page.request.baseURL)
        }
    }

    /// Follows a URL found in the page (for example a `next` field in the body), resolved
    /// against the response's URL; credentials are kept only on the same origin.
    /// - Parameter url: Returns the next page's URL as written, or `nil` after the last page.
    /// - Returns: The strategy.
    public static func nextURL(_ url: @escaping @Sendable (Page<Value>) -> String?) -> PaginationStrategy {
        PaginationStrategy { page in
            guard let written = url(page), !written.isEmpty else { return nil }
            return try page.request.following(reference: written, base: page.response.url ?? page.request.baseURL)
        }
    }

    /// Sends the cursor found in the body as a query parameter, replacing the previous one.
    /// Pagination ends when `cursor` returns `nil` or an empty string.
    /// - Parameters:
    ///   - parameter: The query parameter's name, for example `cursor` or `after`.
    ///   - cursor: Reads the next cursor from the decoded page.
    /// - Returns: The strategy.
    public static func cursor(_ parameter: String, from cursor: @escaping @Sendable (Value) -> String?)
        -> PaginationStrategy
    {
        PaginationStrategy { page in
            guard let next = cursor(page.value), !next.isEmpty else { return nil }
            return page.request.replacingQuery(parameter, with: next)
        }
    }

    /// Advances an offset query parameter by the number of items on each page, starting from
    /// the request's value (0 when absent). Pagination ends after a page with fewer than
    /// `pageSize` items.
    /// - Parameters:
    ///   - parameter: The offset parameter's name; `offset` by default.
    ///   - pageSize: The number of items the server sends on a full page (the `limit` you ask for).
    ///   - count: Counts the items on a decoded page.
    /// - Returns: The strategy.
    public static func offset(
        _ parameter: String = "offset", pageSize: Int, count: @escaping @Sendable (Value) -> Int
    ) -> PaginationStrategy {
        PaginationStrategy { page in
            let items = count(page.value)
            guard items > 0, items >= pageSize else { return nil }
            let current = page.request.queryValue(parameter).flatMap { Int($0) } ?? 0
            return try page.request.replacingQuery(parameter, with: Self.sum(current, items, parameter, page.request))
        }
    }

    /// Advances a page-number query parameter by one, starting from the request's value
    /// (`startingAt` when absent). Pagination ends after a page `isLast` accepts.
    /// - Parameters:
    ///   - parameter: The parameter's name; `page` by default.
    ///   - first: The number of the first page when the request has none; 1 by default.
    ///   - isLast: Whether a decoded page is the last one (for example, it is empty, or it says
    ///     so).
    /// - Returns: The strategy.
    public static func pageNumber(
        _ parameter: String = "page", startingAt first: Int = 1, isLast: @escaping @Sendable (Value) -> Bool
    ) -> PaginationStrategy {
        PaginationStrategy { page in
            guard !isLast(page.value) else { return nil }
            let current = page.request.queryValue(parameter).flatMap { Int($0) } ?? first
            return try page.request.replacingQuery(parameter, with: Self.sum(current, 1, parameter, page.request))
        }
    }

    /// `a + b` as text, or an error naming the parameter when the sum does not fit in an `Int`.
    private static func sum(_ a: Int, _ b: Int, _ parameter: String, _ request: Request) throws(CourierError) -> String {
        let (sum, overflow) = a.addingReportingOverflow(b)
        guard !overflow else {
            throw CourierError(
                .invalidRequest([RequestProblem(.invalidQuery, "the next value of \"\(parameter)\" does not fit in an Int")]),
                request: request)
        }
        return String(sum)
    }
}

extension PaginationStrategy where Value: Collection {
    /// ``offset(_:pageSize:count:)`` counting the page's elements.
    /// - Parameters:
    ///   - parameter: The offset parameter's name; `offset` by default.
    ///   - pageSize: The number of items on a full page.
    /// - Returns: The strategy.
    public static func offset(_ parameter: String = "offset", pageSize: Int) -> PaginationStrategy {
        offset(parameter, pageSize: pageSize, count: { $0.count })
    }

    /// ``pageNumber(_:startingAt:isLast:)`` that ends after an empty page.
    /// - Parameters:
    ///   - parameter: The parameter's name; `page` by default.
    ///   - first: The number of the first page when the request has none.
    /// - Returns: The strategy.
    public static func pageNumber(_ parameter: String = "page", startingAt first: Int = 1) -> PaginationStrategy {
        pageNumber(parameter, startingAt: first, isLast: { $0.isEmpty })
    }
}

extension Request {
    /// The request for a next-page reference the server wrote, resolved against `base`, with
    /// any userinfo dropped.
    /// - Throws: ``CourierError`` with ``CourierError/Cause/invalidRequest(_:)`` when the
    ///   reference is not an `http`/`https` URL or is one that URL parsers would disagree on.
    func following(reference: String, base: URL?) throws(CourierError) -> Request {
        switch URLSyntax.resolve(reference, against: base) {
        case .success(let url): return following(url.removingUserInfo())
        case .failure(let refusal):
            throw CourierError(
                .invalidRequest([RequestProblem(.invalidURL, "the next page's URL \(refusal.reason)")]), request: self)
        }
    }

    /// The request for `url`: same method, headers and options, with sensitive headers removed
    /// when `url` is on another origin than this request.
    func following(_ url: URL) -> Request {
        var next = self
        let leavesOrigin = (try? self.validatedURL()).flatMap(Origin.init) != Origin(url)
        next.baseURL = url
        next.pathSegments = []
        next.queryItems = []
        if leavesOrigin {
            for field in headers where redaction.isSensitive(header: field.name) || headers.sensitiveNames.contains(field.name) { next.headers.remove(field.name) }
        }
        return next
    }

    /// The decoded value of the last query item named `name` (compared after decoding).
    func queryValue(_ name: String) -> String? {
        if let item = queryItems.last(where: { $0.decodedName == name }) {
            return item.isPercentEncoded ? item.value.map { PercentEncoding.decode($0[...]) } : item.value
        }
        // A query written into the base URL (for example by a followed link).
        guard let baseURL, let items = URLComponents(url: baseURL, resolvingAgainstBaseURL: false)?.queryItems else {
            return nil
        }
        return items.last { $0.name == name }?.value
    }

    /// A copy with every query item named `name` (in the items or the base URL) replaced by one
    /// item `name=value` at the end.
    func replacingQuery(_ name: String, with value: String) -> Request {
        var next = self
        next.queryItems.removeAll { $0.decodedName == name }
        if let baseURL, var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false),
            let items = components.percentEncodedQueryItems,
            items.contains(where: { PercentEncoding.decode($0.name[...]) == name })
        {
            // Edit the encoded items, so that the rest of the query keeps its exact spelling.
            let kept = items.filter { PercentEncoding.decode($0.name[...]) != name }
            components.percentEncodedQueryItems = kept.isEmpty ? nil : kept
            if let url = components.url { next.baseURL = url }
        }
        next.queryItems.append(QueryItem(name: name, value: value))
        return next
    }
}
