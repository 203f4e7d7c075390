@testable import CourierNIO
import NIOCore
import NIOHTTP1
import Testing

/// Every step of a request on an HTTP/1.1 connection, without a socket: events in, actions out
/// (as the words `HTTP1StateMachine.Action` prints).
@Suite("NIOExecutor: a request's decisions on its connection")
struct HTTP1StateMachineTests {
    static func head(_ status: Int, _ headers: [(String, String)] = []) -> HTTPResponseHead {
        HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: status), headers: HTTPHeaders(headers))
    }

    static let body = ByteBuffer(string: "hello")

    struct Broken: Error, CustomStringConvertible { var description: String { "broken" } }

    /// The words of `actions`.
    static func words(_ actions: HTTP1StateMachine.Actions) -> [String] { actions.map(\.description) }

    @Test func aRequestAndItsAnswerLeaveTheConnectionReadyForTheNext() {
        var machine = HTTP1StateMachine()
        #expect(Self.words(machine.start(body: .whole, active: true)) == ["write request", "read"])
        #expect(Self.words(machine.receivedHead(Self.head(200))) == ["head 200"])
        #expect(Self.words(machine.receivedBody(Self.body)) == ["body 5"])
        #expect(Self.words(machine.receivedEnd()).isEmpty)
        // Given back before the call hears of the end, so its next hop finds it idle.
        #expect(Self.words(machine.readComplete(active: true)) == ["reuse", "end"])
        #expect(Self.words(machine.start(body: .whole, active: true)) == ["write request", "read"])
    }

    @Test func aStreamedBodyIsWrittenByTheUploadAndTheConnectionKeptOnlyOnceItIsSent() {
        var machine = HTTP1StateMachine()
        #expect(Self.words(machine.start(body: .streamed, active: true)) == ["write head", "start upload", "read"])
        #expect(Self.words(machine.uploadFinished()).isEmpty)
        _ = machine.receivedHead(Self.head(201))
        _ = machine.receivedEnd()
        #expect(Self.words(machine.readComplete(active: true)) == ["reuse", "end"])
    }

    @Test func anAnswerBeforeTheUploadIsDoneStandsAndTheConnectionCloses() {
        var machine = HTTP1StateMachine()
        _ = machine.start(body: .streamed, active: true)
        #expect(Self.words(machine.receivedHead(Self.head(413))) == ["head 413"])
        _ = machine.receivedEnd()
        #expect(Self.words(machine.readComplete(active: true)) == ["do not reuse", "end", "close"])
        // The upload's end, or its failure, comes too late to change anything.
        #expect(Self.words(machine.uploadFinished()).isEmpty)
        #expect(Self.words(machine.uploadFailed(Broken())).isEmpty)
        #expect(Self.words(machine.start(body: .whole, active: true)).first?.hasPrefix("fail") == true)
    }

    @Test func anUploadThatFailsFailsTheCallAndClosesTheConnection() {
        var machine = HTTP1StateMachine()
        _ = machine.start(body: .streamed, active: true)
        #expect(Self.words(machine.uploadFailed(Broken())) == ["do not reuse", "fail (broken)", "close"])
    }

    @Test(arguments: [[("Connection", "close")], [("connection", "Close")]])
    func connectionCloseFromTheServerEndsTheConnection(headers: [(String, String)]) {
        var machine = HTTP1StateMachine()
        _ = machine.start(body: .whole, active: true)
        _ = machine.receivedHead(Self.head(200, headers))
        _ = machine.receivedEnd()
        #expect(Self.words(machine.readComplete(active: true)) == ["do not reuse", "end", "close"])
    }

    @Test func anAnswerOnAConnectionThatClosedIsWholeButTheConnectionIsNotKept() {
        var machine = HTTP1StateMachine()
        _ = machine.start(body: .whole, active: true)
        _ = machine.receivedHead(Self.head(200))
        _ = machine.receivedEnd()
        #expect(Self.words(machine.closed()) == ["do not reuse", "end"])
    }

    @Test func informationalHeadsAreSkippedWithinTheirBounds() {
        var machine = HTTP1StateMachine()
        _ = machine.start(body: .whole, active: true)
        for _ in 0..<InformationalHeads.mostHeads { #expect(machine.receivedHead(Self.head(103, [("Link", "</a.css>")])).isEmpty) }
        #expect(
            Self.words(machine.receivedHead(Self.head(103))) == [
                "do not reuse", "fail (tooManyInformationalHeads(the server sent more than 32 informational (1xx) heads before its answer))", "close",
            ])
        var large = HTTP1StateMachine()
        _ = large.start(body: .whole, active: true)
        let field = [("Link", String(repeating: "l", count: 100_000))]
        #expect(large.receivedHead(Self.head(103, field)).isEmpty)
        #expect(large.receivedHead(Self.head(103, field)).isEmpty)
        #expect(Self.words(large.receivedHead(Self.head(103, field))).contains("close"))
    }

    @Test func aSwitchOfProtocolsIsAnAnswerOnlyToARequestThatAskedForIt() {
        var asked = HTTP1StateMachine()
        _ = asked.start(body: .whole, expectsUpgrade: true, active: true)
        #expect(Self.words(asked.receivedHead(Self.head(101, [("Upgrade", "websocket")]))) == ["do not reuse", "hand over after 101"])
        // The connection is no longer HTTP/1.1's: what follows is not read as HTTP.
        #expect(asked.receivedBody(Self.body).isEmpty)
        #expect(asked.closed().isEmpty)
        var unasked = HTTP1StateMachine()
        _ = unasked.start(body: .whole, active: true)
        #expect(Self.words(unasked.receivedHead(Self.head(101))) == ["head 101"])
        _ = unasked.receivedEnd()
        #expect(Self.words(unasked.readComplete(active: true)) == ["do not reuse", "end", "close"])
    }

    @Test func bytesAfterTheAnswerInTheSameReadMeanTheConnectionIsNotKept() {
        var machine = HTTP1StateMachine()
        _ = machine.start(body: .whole, active: true)
        _ = machine.receivedHead(Self.head(200))
        _ = machine.receivedEnd()
        // A second answer nobody asked for, in the same read.
        #expect(machine.receivedHead(Self.head(200)).isEmpty)
        #expect(Self.words(machine.readComplete(active: true)) == ["do not reuse", "end", "close"])
        // Between requests, bytes nobody asked for close the connection at once.
        var idle = HTTP1StateMachine()
        #expect(Self.words(idle.receivedBody(Self.body)) == ["do not reuse", "close"])
        #expect(Self.words(idle.start(body: .whole, active: true)) == ["fail (connectionClosedBeforeResponse)"])
    }

    @Test func readsWaitWhileTheReaderIsBehind() {
        var machine = HTTP1StateMachine()
        _ = machine.start(body: .whole, active: true)
        _ = machine.receivedHead(Self.head(200))
        #expect(Self.words(machine.read()) == ["read"])
        machine.readerFellBehind()
        #expect(machine.read().isEmpty)
        #expect(Self.words(machine.readerCaughtUp()) == ["read"])
        #expect(machine.readerCaughtUp().isEmpty, "one held read, one read")
    }

    @Test func aFailureAtEachStepEndsTheCallTheWayItShould() {
        // Before the head: the error itself.
        var beforeHead = HTTP1StateMachine()
        _ = beforeHead.start(body: .whole, active: true)
        #expect(Self.words(beforeHead.errorCaught(Broken())) == ["do not reuse", "fail (broken)", "close"])
        // The connection closes before the head, or mid-body.
        var closedEarly = HTTP1StateMachine()
        _ = closedEarly.start(body: .whole, active: true)
        #expect(Self.words(closedEarly.closed()) == ["do not reuse", "fail (connectionClosedBeforeResponse)"])
        var closedMidBody = HTTP1StateMachine()
        _ = closedMidBody.start(body: .whole, active: true)
        _ = closedMidBody.receivedHead(Self.head(200))
        #expect(Self.words(closedMidBody.closed()) == ["do not reuse", "fail (connectionClosedMidBody)"])
        // After an answer that ended: bytes that did not parse leave it standing.
        var afterEnd = HTTP1StateMachine()
        _ = afterEnd.start(body: .whole, active: true)
        _ = afterEnd.receivedHead(Self.head(200))
        _ = afterEnd.receivedEnd()
        #expect(Self.words(afterEnd.errorCaught(Broken())) == ["do not reuse", "end", "close"])
        // While idle: kept for the request the connection was about to be lent for.
        var idle = HTTP1StateMachine()
        #expect(Self.words(idle.errorCaught(Broken())) == ["do not reuse", "close"])
        #expect(Self.words(idle.start(body: .whole, active: true)) == ["fail (broken)"])
        // A connection that is not open takes no request.
        var inactive = HTTP1StateMachine()
        #expect(Self.words(inactive.start(body: .whole, active: false)) == ["fail (connectionClosedBeforeResponse)"])
    }

    @Test func aCancelledCallClosesItsConnectionButAnEndedOneIsLeftAlone() {
        var machine = HTTP1StateMachine()
        _ = machine.start(body: .whole, active: true)
        _ = machine.receivedHead(Self.head(200))
        #expect(Self.words(machine.cancel(CancellationError())) == ["do not reuse", "fail (CancellationError())", "close"])
        var ended = HTTP1StateMachine()
        _ = ended.start(body: .whole, active: true)
        _ = ended.receivedHead(Self.head(200))
        _ = ended.receivedEnd()
        _ = ended.readComplete(active: true)
        #expect(ended.cancel(CancellationError()).isEmpty)
    }

    // MARK: An HTTP/2 stream

    static func http2Head(_ status: Int) -> HTTPResponseHead {
        HTTPResponseHead(version: HTTPVersion(major: 2, minor: 0), status: HTTPResponseStatus(statusCode: status))
    }

    /// An HTTP/2 head carries no `Connection` field, and HTTP/1.1's reading of that (no
    /// keep-alive for a version past 1.1) closed every stream after its answer: a RST_STREAM
    /// (CANCEL) for every request. A whole exchange leaves the stream to end by itself.
    @Test func aWholeExchangeOnAStreamEndsItWithoutAClose() {
        var machine = HTTP1StateMachine(isStream: true)
        #expect(Self.words(machine.start(body: .whole, active: true)) == ["write request", "read"])
        #expect(Self.words(machine.receivedHead(Self.http2Head(200))) == ["head 200"])
        _ = machine.receivedEnd()
        #expect(Self.words(machine.readComplete(active: true)) == ["do not reuse", "end"])
        // The stream carries one exchange.
        #expect(Self.words(machine.start(body: .whole, active: true)).first?.hasPrefix("fail") == true)
        // Ended by the stream's close in the same read: the same.
        var closing = HTTP1StateMachine(isStream: true)
        _ = closing.start(body: .streamed, active: true)
        _ = closing.uploadFinished()
        _ = closing.receivedHead(Self.http2Head(204))
        _ = closing.receivedEnd()
        #expect(Self.words(closing.closed()) == ["do not reuse", "end"])
    }

    /// What did not finish is still reset: an answer before the whole upload (the rest is not
    /// sent), a failure, a cancel.
    @Test func aStreamWhoseExchangeDidNotFinishIsClosed() {
        var early = HTTP1StateMachine(isStream: true)
        _ = early.start(body: .streamed, active: true)
        _ = early.receivedHead(Self.http2Head(413))
        _ = early.receivedEnd()
        #expect(Self.words(early.readComplete(active: true)) == ["do not reuse", "end", "close"])
        var cancelled = HTTP1StateMachine(isStream: true)
        _ = cancelled.start(body: .whole, active: true)
        _ = cancelled.receivedHead(Self.http2Head(200))
        #expect(Self.words(cancelled.cancel(CancellationError())) == ["do not reuse", "fail (CancellationError())", "close"])
        var failed = HTTP1StateMachine(isStream: true)
        _ = failed.start(body: .whole, active: true)
        #expect(Self.words(failed.errorCaught(Broken())) == ["do not reuse", "fail (broken)", "close"])
    }

    /// The HTTP/1.1 reading stands on a connection: an HTTP/1.0 answer without keep-alive closes it.
    @Test func anHTTP10AnswerWithoutKeepAliveClosesAConnection() {
        var machine = HTTP1StateMachine()
        _ = machine.start(body: .whole, active: true)
        _ = machine.receivedHead(HTTPResponseHead(version: .http1_0, status: .ok))
        _ = machine.receivedEnd()
        #expect(Self.words(machine.readComplete(active: true)) == ["do not reuse", "end", "close"])
    }
}
