import Courier
import Foundation
import Testing

@Suite("Multipart bodies (RFC 7578)")
struct MultipartTests {
    /// A random source that returns the given values in turn, then repeats the last.
    static func fixed(_ values: [UInt64]) -> MultipartEncoder.RandomSource {
        let index = Box(0)
        return {
            index.withLock { index in
                defer { index += 1 }
                return values[min(index, values.count - 1)]
            }
        }
    }

    private let base = Request.post |> baseURL("https://api.test") |> path("upload")

    @Test func encodesTextDataAndFileParts() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID().uuidString).txt")
        try Data("file body".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }

        let encoder = MultipartEncoder(random: Self.fixed([0xABCD, 0x1234]))
        let request = base |> multipart(
            [
                .text("title", "Grüße"),
                .data("blob", Data([0x00, 0xFF]), filename: "b.bin"),
                .file("doc", at: file, contentType: .plainText),
            ], encoder: encoder)
        let boundary = "courier-000000000000abcd0000000000001234"
        #expect(request.headers[.contentType] == "multipart/form-data; boundary=\(boundary)")
        var expected = Data()
        expected.append(contentsOf: "--\(boundary)\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nGrüße\r\n".utf8)
        expected.append(contentsOf: "--\(boundary)\r\nContent-Disposition: form-data; name=\"blob\"; filename=\"b.bin\"\r\n".utf8)
        expected.append(contentsOf: "Content-Type: application/octet-stream\r\n\r\n".utf8)
        expected.append(contentsOf: [0x00, 0xFF])
        expected.append(contentsOf: "\r\n--\(boundary)\r\nContent-Disposition: form-data; name=\"doc\"; filename=\"\(file.lastPathComponent)\"\r\n".utf8)
        expected.append(contentsOf: "Content-Type: text/plain; charset=utf-8\r\n\r\nfile body\r\n--\(boundary)--\r\n".utf8)
        // A file part makes the body one read while the request is sent.
        #expect(request.body == nil)
        let source = try #require(request.bodySource)
        #expect(source.knownLength == Int64(expected.count))
        #expect(try await source.collect(upTo: 1 << 20) == expected)
        // Read again (a retry): the same bytes.
        #expect(try await source.collect(upTo: 1 << 20) == expected)
    }

    /// The file is read when the request is sent, not when the builder runs: a change made in
    /// between is what goes out.
    @Test func filesAreReadAtSendTimeNotBuildTime() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID().uuidString).txt")
        try Data("draft".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let request = base |> multipart([.file("doc", at: file)])
        try Data("final".utf8).write(to: file)
        let body = try await #require(request.bodySource).collect(upTo: 1 << 20)
        #expect(String(decoding: body, as: UTF8.self).contains("\r\n\r\nfinal\r\n"))
    }

    @Test func boundaryHas128RandomBits() {
        let boundary = MultipartEncoder().makeBoundary()
        #expect(boundary.hasPrefix("courier-"))
        #expect(boundary.dropFirst("courier-".count).count == 32)
        #expect(MultipartEncoder().makeBoundary() != boundary)
    }

    @Test func contentContainingTheBoundaryGetsANewOne() throws {
        let first = "courier-00000000000000010000000000000002"
        let encoder = MultipartEncoder(random: Self.fixed([1, 2, 3, 4]))
        let request = base |> multipart([.text("evil", "before --\(first) after")], encoder: encoder)
        let type = try #require(request.headers[.contentType])
        #expect(type == "multipart/form-data; boundary=courier-00000000000000030000000000000004")
        #expect(request.problems.isEmpty)
    }

    @Test func boundaryThatNeverClearsIsAProblem() {
        let stuck = "courier-00000000000000070000000000000007"
        let request = base |> multipart([.text("evil", "--\(stuck)")], encoder: MultipartEncoder(random: Self.fixed([7])))
        #expect(request.problemKinds == [.bodyEncodingFailed])
    }

    @Test(arguments: [
        ("a\"b", "a%22b"), ("line\r\nbreak", "line%0D%0Abreak"), ("cr\ronly", "cr%0Donly"), ("lf\nonly", "lf%0Aonly"),
        ("plain", "plain"), ("naïve 😀.txt", "naïve 😀.txt"),
    ])
    func namesAndFilenamesAreEscaped(raw: String, escaped: String) throws {
        let request = base |> multipart(
            [.data(raw, Data("x".utf8), filename: raw)], encoder: MultipartEncoder(random: Self.fixed([1, 1])))
        let text = String(decoding: try #require(request.body), as: UTF8.self)
        #expect(text.contains("name=\"\(escaped)\"; filename=\"\(escaped)\"\r\n"))
    }

    @Test func partContentTypeWithLineBreakIsAProblem() {
        let request = base |> multipart([.data("f", Data(), contentType: "text/plain\r\nX-Evil: 1")])
        #expect(request.problemKinds == [.bodyEncodingFailed])
    }

    @Test func unreadableFileIsAProblemNamingTheFile() throws {
        let missing = URL(fileURLWithPath: "/nonexistent/dir/secret-plan.pdf")
        let request = base |> multipart([.file("doc", at: missing)])
        let problem = try #require(request.problems.first)
        #expect(problem.kind == .bodyEncodingFailed)
        #expect(problem.message.contains("secret-plan.pdf"))
        #expect(!problem.message.contains("/nonexistent/dir"))
    }

    @Test func largeFileIsNeverLoadedByTheBuilder() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-large-\(UUID().uuidString).bin")
        let size = 3 * (1 << 20) + 123
        try Data(repeating: 0x5A, count: size).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let request = base |> multipart([.file("big", at: file)])
        #expect(request.body == nil)
        let source = try #require(request.bodySource)
        var total = 0
        var largest = 0
        for try await chunk in source.chunks() {
            total += chunk.count
            largest = max(largest, chunk.count)
        }
        #expect(total > size && total < size + 512)
        #expect(largest <= 256 << 10)
    }

    /// The names new users guess compile and mean the same parts.
    @Test func guessedPartNamesWork() throws {
        let url = URL(fileURLWithPath: "/tmp/courier-guess.txt")
        #expect(MultipartPart.field("a", "b").content == MultipartPart.text("a", "b").content)
        let guessed = MultipartPart.file("doc", url, contentType: "text/plain")
        #expect(guessed.filename == "courier-guess.txt")
        #expect(guessed.contentType == "text/plain")
        #expect(guessed.content == .file(url))
    }
}
