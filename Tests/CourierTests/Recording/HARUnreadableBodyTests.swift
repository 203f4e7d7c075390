import Courier
import Foundation
import Testing

/// A redacted HAR file holds no secret, also in a body the redactor cannot read (not UTF-8
/// text): such a body is kept, in base64, only when it is data that holds none of the
/// request's secrets in any encoding; otherwise it is left out, and a comment says so.
@Suite("HAR recording: bodies the redactor cannot read")
struct HARUnreadableBodyTests {
    let api = "https://api.example.com/v1"
    static let token = "b-456-live-token"

    /// `text` in the encodings a server may use where the redactor reads only UTF-8.
    static let encodings: [(String, @Sendable (String) -> Data)] = [
        ("UTF-16LE", { utf16($0, bigEndian: false) }),
        ("UTF-16BE", { utf16($0, bigEndian: true) }),
        ("UTF-32LE", { utf32($0, bigEndian: false) }),
        ("UTF-32BE", { utf32($0, bigEndian: true) }),
        ("UTF-8 after a NUL byte", { Data([0]) + Data($0.utf8) }),
    ]

    static func utf16(_ text: String, bigEndian: Bool) -> Data {
        var bytes: [UInt8] = []
        for unit in text.utf16 {
            let pair: [UInt8] = [UInt8(unit & 0xFF), UInt8(unit >> 8)]
            bytes += bigEndian ? pair.reversed() : pair
        }
        return Data(bytes)
    }

    static func utf32(_ text: String, bigEndian: Bool) -> Data {
        var bytes: [UInt8] = []
        for scalar in text.unicodeScalars {
            var four: [UInt8] = []
            for shift in [0, 8, 16, 24] { four.append(UInt8((scalar.value >> UInt32(shift)) & 0xFF)) }
            bytes += bigEndian ? four.reversed() : four
        }
        return Data(bytes)
    }

    static let utf8ThenAnInvalidByte: @Sendable (String) -> Data = { Data($0.utf8) + Data([0xFF]) }
    static let utf16WithAByteOrderMark: @Sendable (String) -> Data = { Data([0xFE, 0xFF]) + encodings[1].1($0) }

    /// Whether `data` holds `secret` in UTF-8, UTF-16 or UTF-32.
    static func holds(_ data: Data, _ secret: String) -> Bool {
        let needles = [Data(secret.utf8)] + encodings.prefix(4).map { $0.1(secret) }
        return needles.contains { data.range(of: $0) != nil }
    }

    /// Every body the archive keeps, as bytes, and the archive's JSON itself.
    static func everythingKept(_ har: HAR) throws -> [Data] {
        var kept = [try har.jsonData()]
        for entry in har.log.entries {
            if let data = entry.request.postData?.data { kept.append(data) }
            if let data = entry.response.content.data { kept.append(data) }
        }
        return kept
    }

    @Test(arguments: encodings)
    func aRequestSecretEchoedInABodyTheRedactorCannotReadIsNotRecorded(_ label: String, _ encode: @Sendable (String) -> Data) async throws {
        let echo = encode(#"{"you sent": "Bearer \#(Self.token)"}"#)
        let recorder = HARRecorder()
        let executor = InMemoryExecutor { _ in .status(200, headers: [.contentType: "application/octet-stream"], body: echo) }.with(recorder)
        _ = try await executor.send(Request.get |> baseURL(api) |> path("echo") |> bearer(Self.token))
        for kept in try Self.everythingKept(recorder.har) { #expect(!Self.holds(kept, Self.token), "\(label)") }
        let content = try #require(recorder.entries.first?.response.content)
        #expect(content.text == nil, "\(label)")
        #expect(content.size == echo.count)
        #expect(content.comment == "body of \(echo.count) bytes not recorded: it holds a secret of the request", "\(label)")
    }

    @Test func aSecretPostedInABodyTheRedactorCannotReadIsNotRecorded() async throws {
        // A binary upload that carries the caller's own credential (a signed blob, say).
        let upload = Data([0x00, 0x01]) + Data(Self.token.utf8) + Data([0xFF])
        let recorder = HARRecorder()
        _ = try await InMemoryExecutor { _ in .status(204) }.with(recorder)
            .send(Request.put |> baseURL(api) |> path("blob") |> header("X-Api-Key", Self.token) |> body(upload, contentType: .octetStream))
        for kept in try Self.everythingKept(recorder.har) { #expect(!Self.holds(kept, Self.token)) }
        let posted = try #require(recorder.entries.first?.request.postData)
        #expect(posted.text == "")
        #expect(posted.comment == "body of \(upload.count) bytes not recorded: it holds a secret of the request")
        #expect(recorder.entries.first?.request.bodySize == upload.count)
    }

    /// Text in an encoding the redactor does not read: its sensitive fields were never found,
    /// so a token the server issued (not one the request carried) would be kept.
    @Test(arguments: [
        ("declared JSON in UTF-16", "application/json; charset=utf-16", HARUnreadableBodyTests.encodings[1].1),
        ("a charset on any type", "application/vnd.example; charset=utf-16le", HARUnreadableBodyTests.encodings[0].1),
        ("text/plain, not UTF-8", "text/plain", HARUnreadableBodyTests.utf8ThenAnInvalidByte),
        ("undeclared JSON Foundation reads as UTF-16", "application/octet-stream", HARUnreadableBodyTests.encodings[0].1),
        ("undeclared JSON Foundation reads as UTF-32", "", HARUnreadableBodyTests.encodings[3].1),
        ("a UTF-16 byte order mark", "application/octet-stream", HARUnreadableBodyTests.utf16WithAByteOrderMark),
    ] as [(String, String, @Sendable (String) -> Data)])
    func textTheRedactorCannotReadIsNotRecorded(_ label: String, _ type: String, _ encode: @Sendable (String) -> Data) async throws {
        let issued = encode(#"{"access_token": "tok-999-issued", "kind": "bearer"}"#)
        let recorder = HARRecorder()
        _ = try await InMemoryExecutor { _ in .status(200, headers: type.isEmpty ? [:] : [.contentType: type], body: issued) }.with(recorder)
            .send(Request.post |> baseURL(api) |> path("login"))
        for kept in try Self.everythingKept(recorder.har) { #expect(!Self.holds(kept, "tok-999-issued"), "\(label)") }
        let content = try #require(recorder.entries.first?.response.content)
        #expect(content.text == nil, "\(label)")
        #expect(content.comment == "body of \(issued.count) bytes not recorded: text that is not UTF-8, which the redactor does not read", "\(label)")
    }

    @Test func aMultipartUploadWithABinaryPartIsNotRecorded() async throws {
        // Its text parts are form fields (a password) inside bytes that are not UTF-8.
        let boundary = "b0undary"
        var upload = Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"password\"\r\n\r\nhunter2-pass\r\n".utf8)
        upload += Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.png\"\r\nContent-Type: image/png\r\n\r\n".utf8)
        upload += Data([0x89, 0x50, 0x4E, 0x47, 0x00, 0xFF]) + Data("\r\n--\(boundary)--\r\n".utf8)
        let recorder = HARRecorder()
        _ = try await InMemoryExecutor { _ in .status(201) }.with(recorder)
            .send(Request.post |> baseURL(api) |> path("upload") |> body(upload, contentType: MediaType(rawValue: "multipart/form-data; boundary=\(boundary)")))
        for kept in try Self.everythingKept(recorder.har) { #expect(!Self.holds(kept, "hunter2-pass")) }
        #expect(recorder.entries.first?.request.postData?.comment?.hasPrefix("body of \(upload.count) bytes not recorded") == true)
    }

    @Test func binaryDataThatHoldsNoSecretIsStillKept() async throws {
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D]) + Data((0..<256).map { UInt8($0) })
        // MP4 and many other formats start with NUL bytes: not text, though Foundation is asked.
        let mp4 = Data([0x00, 0x00, 0x00, 0x18]) + Data("ftypmp42".utf8) + Data(repeating: 0, count: 12)
        let samples = [
            ("image/png", png), ("video/mp4", mp4), ("application/octet-stream", Data([0, 1, 2])),
            ("application/octet-stream; charset=binary", Data([0xFF, 0, 7])),
        ]
        for (type, data) in samples {
            let recorder = HARRecorder()
            _ = try await InMemoryExecutor { _ in .status(200, headers: [.contentType: type], body: data) }.with(recorder)
                .send(Request.get |> baseURL(api) |> path("file") |> bearer(Self.token))
            let content = try #require(recorder.entries.first?.response.content)
            #expect(content.encoding == "base64", "\(type)")
            #expect(content.data == data, "\(type)")
            #expect(content.comment == nil, "\(type)")
        }
    }

    @Test func aSecretCutByTheStreamedRecordingLimitIsNotRecordedInPart() async throws {
        // Binary data up to the limit, then the request's token in UTF-16: the recording keeps
        // the token's first three characters.
        let limit = HARRecorder.streamedBodyLimit
        let secret = Self.encodings[0].1(Self.token)
        let chunks = [Data(repeating: 0xAB, count: limit - 6), secret, Data(repeating: 0xCD, count: 100)]
        let recorder = HARRecorder()
        let executor = InMemoryExecutor { _ in .stream(chunks, headers: [.contentType: "application/octet-stream"]) }.with(recorder)
        let response = try await executor.stream(Request.get |> baseURL(api) |> path("blob") |> bearer(Self.token))
        _ = try await response.body.collect(upTo: 2 * limit)
        let content = try #require(recorder.entries.first?.response.content)
        #expect(content.text == nil)
        let comment = try #require(content.comment)
        #expect(comment.contains("streamed body cut after \(limit) of \(limit + secret.count + 94) bytes"), "\(comment)")
        #expect(comment.contains("not recorded: it holds a secret of the request"), "\(comment)")
    }
}
