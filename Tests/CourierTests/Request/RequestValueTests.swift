import Foundation
import Testing

import Courier
@testable import CourierCore
@testable import CourierURLSession

/// `Request` keeps its less used fields behind one shared reference: it must still behave as a
/// plain value in every way a caller can see.
@Suite("Request is a value: copies never share changes")
struct RequestValueTests {
    @Test func changingACopyLeavesTheOriginalAlone() {
        let original = Request.get |> baseURL("https://api.test") |> timeout(5) |> apiKey("k", in: .query("key"))
        var copy = original
        copy.timeout = 9
        copy.deadline = 30
        copy.allowsRetry = false
        copy.cachePolicy = .reloadIgnoringLocalCacheData
        copy.redaction.insert(queryName: "session")
        copy.encodingDefaults.query = QueryEncoding(arrayEncoding: .comma)
        copy.record(RequestProblem(.invalidQuery, "made up"))

        #expect(original.timeout == 5)
        #expect(original.deadline == nil)
        #expect(original.allowsRetry == nil)
        #expect(original.cachePolicy == nil)
        #expect(!original.redaction.isSensitive(queryName: "session"))
        #expect(original.redaction.isSensitive(queryName: "key"))
        #expect(original.encodingDefaults.query == nil)
        #expect(original.recordedProblems.isEmpty)
        #expect(copy.recordedProblems.count == 1)
        #expect(copy != original)
    }

    @Test func theStartingRequestsAreNotChangedThroughTheirCopies() {
        var first = Request.post
        first.timeout = 1
        first.redaction.headers.insert("X-Secret")
        first.record(RequestProblem(.invalidQuery, "made up"))
        let second = Request.post
        #expect(second.timeout == nil)
        #expect(second.redaction.headers.isEmpty)
        #expect(second.recordedProblems.isEmpty)
        #expect(second == Request(method: .post))
    }

    @Test func equalRequestsBuiltApartAreEqualAndHashAlike() {
        let make = { Request.get |> baseURL("https://api.test") |> path("a") |> timeout(3) |> deadline(10) |> retryable(true) }
        let a = make()
        let b = make()
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        let distinct: Set<Request> = [a, b]
        #expect(distinct.count == 1)
        #expect(a != (make() |> timeout(4)))
    }

    @Test func concurrentCopiesChangeIndependently() async {
        let shared = Request.get |> baseURL("https://api.test") |> timeout(1)
        let timeouts = await withTaskGroup(of: Double?.self) { group in
            for index in 1...50 {
                group.addTask {
                    var mine = shared
                    mine.timeout = Double(index)
                    mine.redaction.insert(queryName: "q\(index)")
                    return mine.timeout
                }
            }
            var all: [Double?] = []
            for await value in group { all.append(value) }
            return all
        }
        let seen: Set<Double> = Set(timeouts.compactMap { (value: Double?) -> Double? in value })
        let expected: Set<Double> = Set((1...50).map { (index: Int) -> Double in Double(index) })
        #expect(seen == expected)
        #expect(shared.timeout == 1)
        #expect(!shared.redaction.isSensitive(queryName: "q1"))
    }
}
