import Courier
import Foundation
import Testing

@Suite("Pagination")
struct PaginationTests {
    private let users = Request.get |> baseURL(api) |> path("users") |> bearer("t0ken") |> decode([User].self)

    /// The value of a query parameter of the URL as sent, wherever the request holds it.
    private static func sentQuery(_ request: Request, _ name: String) -> String? {
        guard let url = try? request.validatedURL() else { return nil }
        return URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.last { $0.name == name }?.value
    }

    private static func people(_ range: ClosedRange<Int>) -> [User] {
        range.map { User(id: $0, name: "user \($0)") }
    }

    // MARK: Link headers

    @Test func parsesRFC8288LinkHeaders() throws {
        let links = WebLink.parse(
            #"<https://api.test/items?page=2>; rel="next", <https://api.test/items?page=9>;rel=last;title="a, b; c", <  /x  >; REL="Prev Start""#
        )
        #expect(links.map(\.target) == ["https://api.test/items?page=2", "https://api.test/items?page=9", "/x"])
        #expect(links[0].relations == ["next"])
        #expect(links[1].relations == ["last"])
        #expect(links[1].parameters.first { $0.name == "title" }?.value == "a, b; c")
        #expect(links[2].relations == ["prev", "start"])
    }

    /// Relation types are split on space and tab bytes, as RFC 8288 readers split them: a
    /// space and a combining mark after it are one Character, and splitting on Characters made
    /// `next` part of one unknown relation.
    @Test func relationsAreSplitOnSpaceBytes() {
        let link = WebLink(target: "/p2", parameters: [WebLink.Parameter(name: "rel", value: "next \u{301}prev\t\u{302}x")])
        #expect(link.relations == ["next", "\u{301}prev", "\u{302}x"])
    }

    @Test func malformedLinksAreSkippedNotFatal() {
        #expect(WebLink.parse("garbage, <https://a.test/2>; rel=next, <unclosed").map(\.target) == ["https://a.test/2"])
        #expect(WebLink.parse("").isEmpty)
        #expect(WebLink.parse(#"<a>; rel="unterminated"#).first?.relations == ["unterminated"])
    }

    @Test func responseResolvesRelativeLinks() throws {
        let response = Response(
            status: 200, headers: ["Link": #"</v1/users?page=2>; rel="next""#],
            url: URL(string: "https://api.example.com/v1/users?page=1"))
        #expect(response.link("next")?.absoluteString == "https://api.example.com/v1/users?page=2")
        #expect(response.link("NEXT") != nil)
        #expect(response.link("prev") == nil)
    }

    @Test func followsLinkHeadersLazilyUntilTheLastPage() async throws {
        let executor = InMemoryExecutor(routes: [
            .init(.get, "/v1/users") { request, _ in
                let page = Self.sentQuery(request, "page") ?? "1"
                var headers: HTTPHeaders = [:]
                if page != "3" { headers.add("Link", "</v1/users?page=\(Int(page)! + 1)>; rel=\"next\"") }
                let first = (Int(page)! - 1) * 2 + 1
                return .json(Self.people(first...(first + 1)), headers: headers)
            }
        ])
        let pages = executor.paginate(users |> query("page", 1), next: .linkHeader())
        #expect(executor.requests.isEmpty, "nothing is sent before iterating")
        var iterator = pages.makeAsyncIterator()
        let first = try #require(try await iterator.next())
        #expect(first.number == 1)
        #expect(executor.requests.count == 1, "the second page is fetched only when asked for")
        var all = first.value
        while let page = try await iterator.next() { all += page.value }
        #expect(all == Self.people(1...6))
        #expect(executor.requests.count == 3)
        #expect(executor.requests.allSatisfy { $0.headers[.authorization] == "Bearer t0ken" }, "same origin keeps credentials")
        #expect(try await iterator.next() == nil)
    }

    @Test func breakingOutStopsFetching() async throws {
        let executor = InMemoryExecutor { request in
            .json([User(id: 1, name: "a")], headers: ["Link": "<\(try request.validatedURL().absoluteString)x>; rel=next"])
        }
        var seen = 0
        for try await _ in executor.paginate(users, next: .linkHeader()) {
            seen += 1
            if seen == 2 { break }
        }
        #expect(executor.requests.count == 2)
    }

    @Test func crossOriginLinkDropsCredentials() async throws {
        let executor = InMemoryExecutor { request in
            let host = try request.validatedURL().host ?? ""
            return host == "api.example.com"
                ? .json([User(id: 1, name: "a")], headers: ["Link": "<https://cdn.other.test/page2>; rel=next"])
                : .json([User(id: 2, name: "b")])
        }
        let values = try await executor.paginate(users |> header("Cookie", "s=1") |> header("X-Keep", "1"), next: .linkHeader())
            .values.reduce(into: [User]()) { $0 += $1 }
        #expect(values.map(\.id) == [1, 2])
        let second = executor.requests[1]
        #expect(second.headers[.authorization] == nil)
        #expect(second.headers[.cookie] == nil)
        #expect(second.headers["X-Keep"] == "1")
    }

    // MARK: Body cursors, offsets and page numbers

    struct Listing: Codable, Sendable, Equatable {
        var users: [User]
        var next: String?
    }

    @Test func cursorFromTheBody() async throws {
        let executor = InMemoryExecutor { request in
            switch Self.sentQuery(request, "after") {
            case nil: .json(Listing(users: Self.people(1...2), next: "c2"))
            case "c2": .json(Listing(users: Self.people(3...4), next: "c+3&"))
            case "c+3&": .json(Listing(users: Self.people(5...5), next: nil))
            default: .status(400)
            }
        }
        let listing = Request.get |> baseURL(api) |> path("users") |> query("limit", 2) |> decode(Listing.self)
        let all = try await executor.paginate(listing, next: .cursor("after", from: \.next))
            .values.reduce(into: [User]()) { $0 += $1.users }
        #expect(all == Self.people(1...5))
        #expect(executor.requests.map { try? $0.validatedURL().absoluteString } == [
            "https://api.example.com/v1/users?limit=2",
            "https://api.example.com/v1/users?limit=2&after=c2",
            "https://api.example.com/v1/users?limit=2&after=c%2B3%26",
        ])
    }

    @Test func offsetAdvancesByTheItemsReceived() async throws {
        let everyone = Self.people(1...7)
        let executor = InMemoryExecutor { request in
            let offset = Int(Self.sentQuery(request, "offset") ?? "0") ?? 0
            return .json(Array(everyone.dropFirst(offset).prefix(3)))
        }
        let pages = executor.paginate(users |> query("limit", 3), next: .offset(pageSize: 3))
        let all = try await pages.values.reduce(into: [User]()) { $0 += $1 }
        #expect(all == everyone)
        #expect(executor.requests.map { Self.sentQuery($0, "offset") } == [nil, "3", "6"])
    }

    @Test func pageNumbersStopAtAnEmptyPage() async throws {
        let executor = InMemoryExecutor { request in
            let page = Int(Self.sentQuery(request, "page") ?? "") ?? 0
            return .json(page <= 2 ? Self.people(page...page) : [])
        }
        let pages = try await executor.paginate(users |> query("page", 1), next: .pageNumber())
            .reduce(into: [Int]()) { $0.append($1.number) }
        #expect(pages == [1, 2, 3])
        #expect(executor.requests.map { Self.sentQuery($0, "page") } == ["1", "2", "3"])
    }

    /// A page number or offset at the edge of `Int` ends with a typed error, not a trap.
    @Test func counterOverflowIsATypedError() async throws {
        let executor = InMemoryExecutor { _ in .json([User(id: 1, name: "a")]) }
        for next in [PaginationStrategy<[User]>.pageNumber(), .offset(pageSize: 1)] {
            let start = users |> query("page", Int.max) |> query("offset", Int.max)
            let error = await expectCourierError { for try await _ in executor.paginate(start, next: next) {} }
            guard case .invalidRequest(let problems) = error?.cause else {
                Issue.record("expected invalidRequest, got \(String(describing: error))")
                continue
            }
            #expect(problems.first?.message.contains("does not fit") == true)
        }
    }

    // MARK: Ending

    @Test func aServerThatNeverStopsHitsTheLimit() async throws {
        let executor = InMemoryExecutor { _ in .json([User(id: 1, name: "a")]) }
        var received = 0
        let error = await expectCourierError {
            for try await _ in executor.paginate(users, next: .pageNumber(), maxPages: 5) { received += 1 }
        }
        guard case .tooManyPages(5) = error?.cause else {
            Issue.record("unexpected \(String(describing: error))")
            return
        }
        #expect(received == 5)
        #expect(executor.requests.count == 5)
        let described: String = error?.description ?? ""
        #expect(!described.contains("t0ken"))
    }

    @Test func aLinkBackToAnEarlierPageIsACycle() async throws {
        let executor = InMemoryExecutor { request in
            let page = Self.sentQuery(request, "page") ?? "1"
            return .json([User(id: 1, name: "a")], headers: ["Link": "</v1/users?page=\(page == "1" ? 2 : 1)>; rel=next"])
        }
        let error = await expectCourierError {
            for try await _ in executor.paginate(users |> query("page", 1), next: .linkHeader()) {}
        }
        guard case .paginationCycle(2) = error?.cause else {
            Issue.record("unexpected \(String(describing: error))")
            return
        }
    }

    @Test func errorsEndTheSequence() async throws {
        let executor = InMemoryExecutor.scripted(
            [.json([User(id: 1, name: "a")], headers: ["Link": "</v1/users?page=2>; rel=next"]), .status(500)],
            then: .status(200))
        var iterator = executor.paginate(users, next: .linkHeader()).makeAsyncIterator()
        #expect(try await iterator.next()?.value == [User(id: 1, name: "a")])
        let error = await expectCourierError { _ = try await iterator.next() }
        #expect(error?.status == 500)
        #expect(try await iterator.next() == nil, "nothing more after an error")
        #expect(executor.requests.count == 2)
    }

    @Test(arguments: ["file:///etc/passwd", "data:text/plain,next", "javascript:alert(1)", "http://[bad"])
    func aPageWhoseNextLinkIsUnusableIsDeliveredBeforeTheError(_ link: String) async throws {
        let executor = InMemoryExecutor { _ in .json([User(id: 7, name: "kept")], headers: ["Link": "<\(link)>; rel=next"]) }
        var iterator = executor.paginate(users, next: .linkHeader()).makeAsyncIterator()
        #expect(try await iterator.next()?.value == [User(id: 7, name: "kept")])
        let error = await expectCourierError { _ = try await iterator.next() }
        guard case .invalidRequest = error?.cause else {
            Issue.record("unexpected \(String(describing: error))")
            return
        }
        #expect(try await iterator.next() == nil, "nothing more after the error")
        #expect(executor.requests.count == 1)
    }

    @Test func strategyErrorsAreTyped() async throws {
        let executor = InMemoryExecutor { _ in .json([User(id: 1, name: "a")]) }
        let error = await expectCourierError {
            for try await _ in executor.paginate(users, next: .nextURL { _ in "http://[bad" }) {}
        }
        guard case .invalidRequest = error?.cause else {
            Issue.record("unexpected \(String(describing: error))")
            return
        }
    }

    @Test func cancellationStopsBeforeTheNextFetch() async throws {
        let gate = Box(0)
        let executor = InMemoryExecutor { _ in
            gate.withLock { $0 += 1 }
            return .json([User(id: 1, name: "a")])
        }
        let task = Task {
            var pages = 0
            for try await _ in executor.paginate(users, next: .pageNumber()) {
                pages += 1
                if pages == 2 { withUnsafeCurrentTask { $0?.cancel() } }
            }
            return pages
        }
        let error = await expectCourierError { _ = try await task.value }
        guard case .cancelled = error?.cause else {
            Issue.record("unexpected \(String(describing: error))")
            return
        }
        let fetched: Int = gate.withLock { $0 }
        #expect(fetched == 2)
    }
}
