import Courier
import Foundation
import Testing

/// Lists, booleans and dates in queries and forms follow the same strategies, per call or as an
/// API-wide default.
@Suite("Query and form encoding strategies")
struct QueryEncodingTests {
    private let base = Request.get |> baseURL("https://api.test/")
    private static let date = Date(timeIntervalSince1970: 1_700_000_000.5)

    @Test(arguments: [
        (ArrayEncoding.noBrackets, "ids=1&ids=2&ids=3"), (.repeated, "ids=1&ids=2&ids=3"),
        (.brackets, "ids%5B%5D=1&ids%5B%5D=2&ids%5B%5D=3"), (.indexed, "ids%5B0%5D=1&ids%5B1%5D=2&ids%5B2%5D=3"),
        (.comma, "ids=1,2,3"),
    ])
    func arrays(encoding: ArrayEncoding, expected: String) throws {
        let request = base |> query("ids", [1, 2, 3], encoding: QueryEncoding(arrayEncoding: encoding))
        #expect(try #require(request.url).query(percentEncoded: true) == expected)
    }

    @Test func commaKeepsAnElementsOwnCommasApart() throws {
        let request = base |> query("tags", ["a,b", "c d"], encoding: QueryEncoding(arrayEncoding: .comma))
        #expect(try #require(request.url).query(percentEncoded: true) == "tags=a%2Cb,c%20d")
        #expect((base |> query("tags", [String](), encoding: QueryEncoding(arrayEncoding: .comma))).url?.query == nil)
    }

    @Test(arguments: [(BoolEncoding.literal, "on=true&off=false"), (.numeric, "on=1&off=0")])
    func bools(encoding: BoolEncoding, expected: String) throws {
        let strategy = QueryEncoding(boolEncoding: encoding)
        let request = base |> query("on", true, encoding: strategy) |> query("off", false, encoding: strategy)
        #expect(try #require(request.url).query(percentEncoded: true) == expected)
    }

    @Test(arguments: [
        (DateEncoding.iso8601, "since=2023-11-14T22:13:20Z"), (.secondsSince1970, "since=1700000000.5"),
        (.millisecondsSince1970, "since=1700000000500"), (.custom({ _ in "yesterday" }), "since=yesterday"),
    ])
    func dates(encoding: DateEncoding, expected: String) throws {
        let request = base |> query("since", Self.date, encoding: QueryEncoding(dateEncoding: encoding))
        #expect(try #require(request.url).query(percentEncoded: true) == expected)
    }

    @Test func datesAndOptionalsUseTheDefaults() throws {
        let none: Date? = nil
        let request = base |> query("since", Self.date) |> query("until", none) |> query("flags", [true, false])
        #expect(try #require(request.url).query(percentEncoded: true) == "since=2023-11-14T22:13:20Z&flags=true&flags=false")
    }

    /// One builder sets the strategies for a whole API; a call that names its own wins.
    @Test func apiWideDefaultsApplyToLaterBuilders() throws {
        struct Filter: Encodable {
            var tags = ["a", "b"]
            var active = true
            var since = QueryEncodingTests.date
        }
        let api = baseURL("https://api.test/") <> encodingDefaults(
            query: QueryEncoding(arrayEncoding: .comma, boolEncoding: .numeric, dateEncoding: .secondsSince1970),
            form: FormEncoder(arrayEncoding: .indexed, boolEncoding: .numeric, dateEncoding: .millisecondsSince1970))
        let search = Request.get |> api |> query("tags", ["a", "b"]) |> query("active", true) |> query("since", Self.date)
            |> query("ids", [1, 2], encoding: QueryEncoding())
        #expect(try #require(search.url).query(percentEncoded: true) == "tags=a,b&active=1&since=1700000000.5&ids=1&ids=2")
        let posted = Request.post |> api |> form(encoding: Filter())
        #expect(posted.body.map { String(decoding: $0, as: UTF8.self) } == "tags%5B0%5D=a&tags%5B1%5D=b&active=1&since=1700000000500")
        let own = Request.post |> api |> form(encoding: Filter(), encoder: FormEncoder(arrayEncoding: .comma))
        #expect(own.body.map { String(decoding: $0, as: UTF8.self) } == "tags=a%2Cb&active=true&since=2023-11-14T22%3A13%3A20Z")
    }

    @Test func customValuesConformByRepresentation() throws {
        enum Weekday: String, QueryValue {
            case monday
            var queryRepresentation: QueryRepresentation { .text(rawValue) }
        }
        #expect((base |> query("day", Weekday.monday)).url?.query == "day=monday")
    }
}
