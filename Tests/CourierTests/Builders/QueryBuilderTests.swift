import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import Testing

@Suite("Query builders")
struct QueryBuilderTests {
    private let base = Request.get |> baseURL("https://api.test")

    @Test func stringsNumbersAndBools() {
        let request = base |> query("s", "x") |> query("i", 42) |> query("d", 1.5) |> query("b", true)
            |> query("f", false) |> query("neg", -3)
        #expect(request.renderedURL == "https://api.test?s=x&i=42&d=1.5&b=true&f=false&neg=-3")
    }

    @Test func arraysRepeatTheName() {
        #expect((base |> query("id", [1, 2, 3])).renderedURL == "https://api.test?id=1&id=2&id=3")
        #expect((base |> query("tag", [String]())).renderedURL == "https://api.test")
    }

    @Test func nilAddsNothingAndSomeAddsTheValue() {
        let missing: Int? = nil
        let present: String? = "yes"
        #expect((base |> query("a", missing) |> query("b", present)).renderedURL == "https://api.test?b=yes")
    }

    @Test func orderAndRepeatedNamesAreKept() {
        let request = base |> query("b", 1) |> query("a", 2) |> query("b", 3)
        #expect(request.queryItems.map(\.name) == ["b", "a", "b"])
        #expect(request.renderedURL == "https://api.test?b=1&a=2&b=3")
    }

    @Test(arguments: [
        ("a+b c&d=e#f", "a%2Bb%20c%26d%3De%23f"),
        ("100%", "100%25"),
        ("semi;colon", "semi%3Bcolon"),
        ("path/like?q", "path/like?q"),
        ("é", "%C3%A9"),
        ("line\r\nbreak", "line%0D%0Abreak"),
        ("nul\0", "nul%00"),
    ])
    func valuesArePercentEncoded(value: String, encoded: String) {
        #expect((base |> query("q", value)).renderedURL == "https://api.test?q=" + encoded)
    }

    @Test func namesArePercentEncoded() {
        #expect((base |> query("a b&c", "1")).renderedURL == "https://api.test?a%20b%26c=1")
    }

    @Test func queryItemsBuilderAppendsInOrder() {
        let request = base |> query([QueryItem(name: "flag", value: nil), QueryItem(name: "x", value: "1")])
        #expect(request.renderedURL == "https://api.test?flag&x=1")
    }

    @Test func uuidAndDecimal() throws {
        let id = try #require(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
        let request = base |> query("id", id) |> query("amount", Decimal(string: "12.50") ?? 0)
        #expect(request.renderedURL == "https://api.test?id=E621E1F8-C36C-495A-93FC-0C247A3E6E5F&amount=12.5")
    }
}
