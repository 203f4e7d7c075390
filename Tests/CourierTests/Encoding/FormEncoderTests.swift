import Courier
import Foundation
import Testing

@Suite("Form encoding (application/x-www-form-urlencoded)")
struct FormEncoderTests {
    struct Filter: Encodable {
        var tags: [String] = ["a", "b"]
        var active = true
        var since = Date(timeIntervalSince1970: 1_700_000_000.5)
        var pageSize = 20
        var note: String? = "x y"
    }

    private func encoded(_ value: some Encodable, _ encoder: FormEncoder = FormEncoder()) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    @Test(arguments: [
        ("a b+c~", "a+b%2Bc~"), ("*-._", "*-._"), ("&=#%", "%26%3D%23%25"), ("é😀", "%C3%A9%F0%9F%98%80"),
        ("/?:@!$'(),;", "%2F%3F%3A%40%21%24%27%28%29%2C%3B"), ("\r\n", "%0D%0A"),
    ])
    func serializerFollowsWHATWG(input: String, output: String) {
        #expect(FormEncoder().encode(pairs: [(input, input)]) == Data("\(output)=\(output)".utf8))
    }

    @Test func spacesAsPercent20() {
        #expect(FormEncoder(spaceEncoding: .percent20).encode(pairs: [("a b", "c d")]) == Data("a%20b=c%20d".utf8))
    }

    @Test(arguments: [
        (FormEncoder.ArrayEncoding.brackets, "tags%5B%5D=a&tags%5B%5D=b"),
        (.noBrackets, "tags=a&tags=b"),
        (.indexed, "tags%5B0%5D=a&tags%5B1%5D=b"),
    ])
    func arrayStrategies(strategy: FormEncoder.ArrayEncoding, expected: String) throws {
        struct Tags: Encodable { var tags = ["a", "b"] }
        #expect(try encoded(Tags(), FormEncoder(arrayEncoding: strategy)) == expected)
    }

    @Test func boolStrategies() throws {
        struct Flags: Encodable { var on = true; var off = false }
        #expect(try encoded(Flags()) == "on=true&off=false")
        #expect(try encoded(Flags(), FormEncoder(boolEncoding: .numeric)) == "on=1&off=0")
    }

    @Test func dateStrategies() throws {
        struct When: Encodable { var at = Date(timeIntervalSince1970: 1_700_000_000) }
        #expect(try encoded(When()) == "at=2023-11-14T22%3A13%3A20Z")
        #expect(try encoded(When(), FormEncoder(dateEncoding: .secondsSince1970)) == "at=1700000000")
        #expect(try encoded(When(), FormEncoder(dateEncoding: .millisecondsSince1970)) == "at=1700000000000")
        let custom = FormEncoder(dateEncoding: .custom { date in "day-\(Int(date.timeIntervalSince1970) / 86_400)" })
        #expect(try encoded(When(), custom) == "at=day-19675")
    }

    @Test func keyStrategies() throws {
        struct Keys: Encodable { var pageSize = 1; var userID = 2; var URLString = "u" }
        #expect(try encoded(Keys()) == "pageSize=1&userID=2&URLString=u")
        #expect(try encoded(Keys(), FormEncoder(keyEncoding: .convertToSnakeCase)) == "page_size=1&user_id=2&url_string=u")
        #expect(try encoded(Keys(), FormEncoder(keyEncoding: .custom { $0.uppercased() })) == "PAGESIZE=1&USERID=2&URLSTRING=u")
    }

    @Test func nestedContainersUseBrackets() throws {
        struct Outer: Encodable {
            struct Inner: Encodable { var city = "Zürich"; var codes = [1, 2] }
            var address = Inner()
        }
        #expect(try encoded(Outer()) == "address%5Bcity%5D=Z%C3%BCrich&address%5Bcodes%5D%5B%5D=1&address%5Bcodes%5D%5B%5D=2")
    }

    @Test func nilIsLeftOutAndOrderIsKept() throws {
        struct Mixed: Encodable {
            var z = "last?"
            var missing: Int? = nil
            var a = 1
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(z, forKey: .z)
                try container.encodeIfPresent(missing, forKey: .missing)
                try container.encode(a, forKey: .a)
            }
            enum CodingKeys: CodingKey { case z, missing, a }
        }
        #expect(try encoded(Mixed()) == "z=last%3F&a=1")
    }

    @Test func nonFiniteNumbersAreEncodingErrors() {
        struct Bad: Encodable { var value = Double.infinity }
        #expect(throws: EncodingError.self) { try FormEncoder().encode(Bad()) }
        let request = Request.post |> baseURL("https://api.test") |> form(encoding: Bad())
        #expect(request.problemKinds == [.bodyEncodingFailed])
        #expect(request.problems.first?.message.contains("value") == true)
    }

    @Test func topLevelMustBeKeyed() {
        #expect(throws: RequestProblem.self) { try FormEncoder().encode("just a string") }
    }
}
