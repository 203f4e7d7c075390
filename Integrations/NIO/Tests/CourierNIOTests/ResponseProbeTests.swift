import Courier
@_spi(Fuzzing) import CourierNIOProbe
import Foundation
import Testing

/// Answers read by the connection's own pipeline, without a server (ResponseProbe): the rules
/// the `HTTP1Response` fuzz target checks on any bytes, here on the cases that matter.
@Suite("NIOExecutor: what a connection makes of an answer")
struct ResponseProbeTests {
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func aFramedAnswerIsReadAndTheConnectionKept() {
        let outcome = ResponseProbe.run([Self.bytes("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")])
        #expect(outcome == .init(result: .answer(status: 200, body: Data("hello".utf8)), reusable: true))
    }

    @Test func anAnswerDelimitedByTheCloseIsReadAndTheConnectionNotKept() {
        let outcome = ResponseProbe.run([Self.bytes("HTTP/1.1 200 OK\r\n\r\nhel"), Self.bytes("lo")])
        #expect(outcome == .init(result: .answer(status: 200, body: Data("hello".utf8)), reusable: false))
    }

    @Test func connectionCloseIsHonoured() {
        let outcome = ResponseProbe.run([Self.bytes("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok")])
        #expect(outcome.reusable == false)
    }

    @Test func aCutBodyIsTruncated() {
        let outcome = ResponseProbe.run([Self.bytes("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello")])
        guard case .failure(let kind, _) = outcome.result else { Issue.record("\(outcome)"); return }
        #expect(kind == .truncatedBody)
        let chunked = ResponseProbe.run([Self.bytes("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")])
        guard case .failure(let chunkedKind, _) = chunked.result else { Issue.record("\(chunked)"); return }
        #expect(chunkedKind == .truncatedBody)
    }

    @Test func noAnswerAtAllIsALostConnection() {
        let outcome = ResponseProbe.run([])
        guard case .failure(let kind, _) = outcome.result else { Issue.record("\(outcome)"); return }
        #expect(kind == .connectionLost)
    }

    /// The head that traps AsyncHTTPClient: here the head is handed on (the exchange refuses a
    /// status below 200 as a bad response) and the connection is not kept.
    @Test(arguments: ["000", "099", "042", "101"])
    func aStatusThatIsNotAFinalAnswerIsHandedOnAndTheConnectionDropped(status: String) {
        let outcome = ResponseProbe.run([Self.bytes("HTTP/1.1 \(status) Odd\r\nContent-Length: 5\r\n\r\nhello")])
        if case .answer(let code, _) = outcome.result { #expect(code == Int(status)) }
        #expect(outcome.reusable == false)
    }

    @Test func informationalHeadsBeforeTheAnswerAreSkipped() {
        let outcome = ResponseProbe.run([
            Self.bytes("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"),
            Self.bytes("HTTP/1.1 204 No Content\r\n\r\n"),
        ])
        #expect(outcome == .init(result: .answer(status: 204, body: Data()), reusable: true))
    }

    @Test func bytesAfterTheAnswerAreNeverKept() {
        let outcome = ResponseProbe.run([Self.bytes("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n\r\n")])
        #expect(outcome.result == .answer(status: 200, body: Data("ok".utf8)))
        #expect(outcome.reusable == false)
    }

    @Test func theAnswerToHEADHasNoBodyWhateverItsLengthSays() {
        let outcome = ResponseProbe.run([Self.bytes("HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n")], head: true)
        #expect(outcome == .init(result: .answer(status: 200, body: Data()), reusable: true))
    }

    @Test(arguments: ["HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", "garbage\r\n\r\n", "HTTP/1.1 2x0 OK\r\n\r\n"])
    func aBrokenHeadIsABadResponse(text: String) {
        let outcome = ResponseProbe.run([Self.bytes(text)])
        guard case .failure(let kind, _) = outcome.result else { Issue.record("\(outcome)"); return }
        #expect(kind == .badResponse)
        #expect(outcome.reusable == false)
    }
}
