import Courier
import Foundation
import Testing

@Suite("Pre-encoded query input")
struct PreEncodedQueryTests {
    private let base = Request.get |> baseURL("https://api.test")

    @Test func sentExactlyAsGivenWithoutDoubleEncoding() {
        let request = base |> query(percentEncoded: "cursor", "abc%3D%3D") |> query("plain", "abc==")
        #expect(request.renderedURL == "https://api.test?cursor=abc%3D%3D&plain=abc%3D%3D")
    }

    @Test(arguments: ["a+b", "x=y", "%C3%A9", "a/b?c:d@e", "~-._"])
    func validEncodedValuesAreAccepted(value: String) {
        #expect((base |> query(percentEncoded: "v", value)).problems.isEmpty)
    }

    @Test(arguments: ["a&b", "a#b", "a b", "a;b", "50%", "%zz", "%4", "é", "a\r\nb"])
    func structureChangingValuesAreProblems(value: String) {
        #expect((base |> query(percentEncoded: "v", value)).problemKinds == [.invalidQuery])
    }

    @Test func equalsSignIsNotAllowedInAName() {
        #expect((base |> query(percentEncoded: "a=b", "c")).problemKinds == [.invalidQuery])
    }

    @Test func sensitivePreEncodedNamesAreRedacted() {
        let request = base |> query(percentEncoded: "access%5Ftoken", "s3cr3t")
        #expect(!request.description.contains("s3cr3t"))
    }
}
