@_spi(Transports) import CourierCore
import Foundation
import Testing

import Courier
@testable import CourierCore
@testable import CourierURLSession

/// The pieces a transport that is not Foundation's builds on: headers converted on first read,
/// the URL string validated once, the time limits as a transport enforces them.
@Suite("Transport API: deferred headers, URL string, time limits")
struct DeferredHeadersTests {
    /// Counts conversions. `@unchecked Sendable` is sound: the count is only touched in its lock.
    final class Conversions: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        func record() {
            lock.lock()
            count += 1
            lock.unlock()
        }
        var value: Int {
            lock.lock()
            defer { lock.unlock() }
            return count
        }
    }

    static let fields: HTTPHeaders = [
        "Content-Type": "application/json", "Content-Length": "12", "Set-Cookie": "session=s3cr3t", "X-Request-ID": "abc",
    ]

    @Test func headersAreConvertedOnceWhenFirstReadAndSharedByCopies() {
        let conversions = Conversions()
        let response = Response(status: 200, body: Data("{\"id\":1}\n   ".utf8)) {
            conversions.record()
            return Self.fields
        }
        #expect(conversions.value == 0)
        let copy = response
        #expect(copy.headers == Self.fields)
        #expect(response.headers[.contentType] == "application/json")
        #expect(response.contentType == .json)
        #expect(conversions.value == 1)
        #expect(response == Response(status: 200, headers: Self.fields, body: Data("{\"id\":1}\n   ".utf8)))
    }

    @Test func theFramingCheckReadsTheDeferredLength() {
        let short = Response(status: 200, body: Data("{}".utf8)) { Self.fields }
        #expect(short.framingFailure(method: .get)?.kind == .truncatedBody)
        #expect(short.framingFailure(method: .head) == nil)
        let whole = Response(status: 200, body: Data("{\"id\":1}\n   ".utf8)) { Self.fields }
        #expect(whole.framingFailure(method: .get) == nil)
    }

    @Test func redactedCopiesHideSensitiveHeadersAndLeaveTheOriginal() {
        let response = Response(status: 200) { Self.fields }
        let shown = response.redactingHeaders(with: .standard)
        #expect(shown.headers[.setCookie] != "session=s3cr3t")
        #expect(!String(describing: shown).contains("s3cr3t"))
        #expect(response.headers[.setCookie] == "session=s3cr3t")
        var replaced = response
        replaced.headers = ["X-Other": "1"]
        #expect(replaced.headers.count == 1)
        #expect(response.headers.count == Self.fields.count)
    }

    @Test func aStreamedResponseKeepsItsHeadersDeferred() async throws {
        let conversions = Conversions()
        let head = Response(status: 201) {
            conversions.record()
            return ["Location": "/items/1"]
        }
        let streamed = StreamedResponse(head: head, body: ByteStream(Data("ok".utf8)))
        let collected = try await streamed.collect()
        #expect(conversions.value == 0)
        #expect(collected.status == 201 && collected.body == Data("ok".utf8))
        #expect(collected.headers[.location] == "/items/1")
        #expect(conversions.value == 1)
    }

    @Test func theURLStringIsTheValidatedURLsString() throws {
        let request = Request.get |> baseURL("https://api.test/v1/") |> path("users", "a b/c") |> query("q", "x&y=z")
        #expect(try request.validatedURLString() == request.validatedURL().absoluteString)
        #expect(try request.validatedURLString() == "https://api.test/v1/users/a%20b%2Fc?q=x%26y%3Dz")
        #expect(throws: CourierError.self) { try Request.get.validatedURLString() }
        #expect(throws: CourierError.self) { try (Request.get |> url("https://api.test") |> header("X", "a\nb")).validatedURLString() }
    }

    @Test func timeLimitsAreClampedAndInvalidOnesAreNil() {
        var request = Request.get
        #expect(request.effectiveTimeout == nil && request.effectiveDeadline == nil)
        request.timeout = 0.25
        request.deadline = 3
        #expect(request.effectiveTimeout == 0.25 && request.effectiveDeadline == 3)
        for bad in [0, -1, .nan, .infinity] as [TimeInterval] {
            request.timeout = bad
            request.deadline = bad
            #expect(request.effectiveTimeout == nil && request.effectiveDeadline == nil)
        }
        request.timeout = 1e300
        request.deadline = .greatestFiniteMagnitude
        #expect(request.effectiveTimeout == Request.maximumInterval && request.effectiveDeadline == Request.maximumInterval)
    }
}
