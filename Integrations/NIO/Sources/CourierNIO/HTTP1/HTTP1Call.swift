@_spi(Transports) import CourierCore
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import NIOCore
import NIOHTTP1

/// What a hop's response is, as the connection hands it over: its head, and its body either
/// complete (gathered on the event loop: one wake-up for the caller) or still arriving.
package struct HTTP1Answer: Sendable {
    package var head: HTTPResponseHead
    package var body: Body

    package enum Body: Sendable {
        /// The whole body, `nil` when it was empty.
        case complete(ByteBuffer?)
        /// Pieces as they arrive, with backpressure: reads stop while the reader is behind.
        case streaming(HTTP1Call.Pieces)
    }
}

/// One request on one HTTP/1.1 connection, from its head written to its response's end: the
/// caller's side of it (the answer it waits for, the streamed body it reads, the upload it
/// produces). What happens on the connection is decided by the ``HTTP1Handler``'s state machine;
/// this hands the caller what it is given and tells the handler what the caller and the upload
/// do. Made by the transport; every method but ``start(on:handler:onIdle:)`` and ``cancel()``
/// runs on the connection's event loop, so its state needs no lock (hence `@unchecked
/// Sendable`: only the loop touches it).
package final class HTTP1Call: @unchecked Sendable {
    package typealias Pieces = NIOThrowingAsyncSequenceProducer<
        ByteBuffer, any Error, NIOAsyncSequenceProducerBackPressureStrategies.HighLowWatermark, PiecesDelegate
    >

    let head: HTTPRequestHead
    /// The body when it is in hand.
    let bodyInHand: ByteBuffer?
    /// The body when it is read while it is sent, held to the length its head declares.
    let upload: FramedBody?
    let progress: TransferProgress?
    /// Whether the body is gathered on the loop (the caller reads it whole) or streamed.
    let gathers: Bool
    /// Where the hop records its request and response moments, when something reads them.
    let timings: HopTimings.Recorder?
    /// What a gathered body is held to, when the exchange set rules.
    let rules: GatheringRules?
    private let promise: EventLoopPromise<HTTP1Answer>

    private weak var handler: HTTP1Handler?
    private var channel: (any Channel)?
    private var response: HTTPResponseHead?
    private var gathered: ByteBuffer?
    /// The most raw bytes gathered for this response (``GatheringRules/gatherLimit``).
    private var gatherLimit: Int?
    /// The gathered body went past its limit: the rest is dropped while the call fails with this.
    private var overLimit: (any Error)?
    private var source: Pieces.Source?
    /// A streamed body's bytes of the read under way, handed to the reader as one piece when the
    /// read is over (``readComplete()``): an HTTP/2 stream receives a body as frames of 16 KiB
    /// and a chunked HTTP/1.1 body in chunks, and each piece handed over alone woke the reader's
    /// thread (a gigabyte over HTTP/2 cost 64,000 thread wake-ups).
    private var held: ByteBuffer?
    private var finished = false
    /// Response bytes arrived (a failure after them is not a lost connection).
    private var receivedAny = false
    /// Reads the body from its source and writes it; cancelled when the call ends, so a producer
    /// that waits for something never outlives its call.
    private var uploadTask: Task<Void, Never>?

    package init(
        head: HTTPRequestHead, bodyInHand: ByteBuffer?, upload: FramedBody?, progress: TransferProgress?, gathers: Bool,
        timings: HopTimings.Recorder? = nil, rules: GatheringRules? = nil, eventLoop: any EventLoop
    ) {
        self.rules = gathers ? rules : nil
        self.head = head
        self.bodyInHand = bodyInHand
        self.upload = upload
        self.progress = progress
        self.gathers = gathers
        self.timings = timings
        self.promise = eventLoop.makePromise()
    }

    var streamsBody: Bool { upload != nil }
    /// Whether the call has ended (answered in full, or failed). On the loop only.
    var isFinished: Bool { finished }
    package var answer: EventLoopFuture<HTTP1Answer> { promise.futureResult }

    /// Waits for the answer (handed over from the loop: ``EventLoopFuture/handedOver()``).
    func answered() async throws -> HTTP1Answer {
        try await answer.handedOver()
    }

    private func succeed(_ answer: HTTP1Answer) {
        promise.succeed(answer)
    }

    /// Runs the call on `channel`, whose last handler is `handler` (an HTTP/1.1 connection's, or
    /// an HTTP/2 stream's); the answer arrives through ``answer``, and `onIdle` learns whether the
    /// connection may be lent again once the call is over.
    func start(on channel: any Channel, handler: NIOLoopBound<HTTP1Handler>, onIdle: @escaping @Sendable (_ reusable: Bool) -> Void) {
        channel.eventLoop.execute {
            let handler = handler.value
            handler.onIdle = onIdle
            handler.start(self)
        }
    }

    /// Ends the call early from outside the loop (the task was cancelled).
    func cancel() {
        // The promise's loop (a constant) is the connection's: nothing the loop writes is read here.
        promise.futureResult.eventLoop.execute {
            if let handler = self.handler {
                handler.abandon(self, with: CancellationError())
            } else {
                self.fail(CancellationError())
            }
        }
    }

    // MARK: Called by the handler

    func connectionStarted(context: ChannelHandlerContext, handler: HTTP1Handler) {
        self.handler = handler
        self.channel = context.channel
        timings?.mark(.requestStarted)
        if let bodyInHand {
            progress?.update(completed: 0, expected: Int64(bodyInHand.readableBytes))
        } else if let upload {
            progress?.update(completed: 0, expected: upload.length)
        }
    }

    func requestSent() {
        timings?.mark(.requestSent)
        if let bodyInHand {
            let length = Int64(bodyInHand.readableBytes)
            progress?.update(completed: length, expected: length)
        }
    }

    func receivedHead(_ head: HTTPResponseHead) {
        receivedAny = true
        response = head
        timings?.mark(.firstByte)
        if let rules {
            rules.rules.noteActivity()
            gatherLimit = rules.gatherLimit(head)
        }
        guard !gathers else { return }
        let made = Pieces.makeSequence(
            backPressureStrategy: .init(lowWatermark: 2, highWatermark: 8), finishOnDeinit: false, delegate: PiecesDelegate(call: self))
        source = made.source
        succeed(HTTP1Answer(head: head, body: .streaming(made.sequence)))
    }

    /// Takes a piece of the body: gathered, or held for the reader of a streamed body until the
    /// read is over (``readComplete()`` says whether that reader is behind).
    func receivedBody(_ buffer: ByteBuffer) {
        guard !finished else { return }
        if gathers {
            guard overLimit == nil else { return }
            rules?.rules.noteActivity()
            var buffer = buffer
            if gathered == nil {
                gathered = buffer
            } else {
                gathered?.writeBuffer(&buffer)
            }
            if let gatherLimit, let rules, let response, (gathered?.readableBytes ?? 0) > gatherLimit {
                // Past the size limit: nothing more is kept, and the call fails with the head
                // (out of the handler's pass over its actions; the connection closes).
                let error = rules.tooLarge(response)
                overLimit = error
                gathered = nil
                promise.futureResult.eventLoop.execute {
                    if let handler = self.handler { handler.abandon(self, with: error) } else { self.fail(error) }
                }
            }
            return
        }
        guard source != nil else { return }
        if held == nil {
            held = buffer
        } else {
            var buffer = buffer
            held?.writeBuffer(&buffer)
        }
    }

    /// A read is over: a streamed body's bytes held from it go to the reader as one piece.
    /// `false` when the reader is behind (reads should wait until it catches up).
    func readComplete() -> Bool {
        guard let piece = held, let source else { return true }
        held = nil
        return source.yield(piece) != .stopProducing
    }

    func receivedEnd() {
        guard !finished else { return }
        // The whole body came in the same read as the bytes past the limit.
        if let overLimit { return fail(overLimit) }
        finished = true
        timings?.mark(.bodyEnded)
        // An answer before the whole upload (the server read no further): the rest is not sent.
        uploadTask?.cancel()
        if let source {
            // What the read held so far comes first.
            _ = readComplete()
            source.finish()
        } else if let response {
            succeed(HTTP1Answer(head: response, body: .complete(gathered)))
        }
    }

    func fail(_ error: any Error) {
        guard !finished else { return }
        finished = true
        uploadTask?.cancel()
        if receivedAny { timings?.mark(.bodyEnded) }
        // Before any response byte, a connection that closed is a lost connection whatever
        // SwiftNIO called it: the request may be sent again if it is idempotent.
        let error = !receivedAny && TransportErrors.isConnectionClosure(error) ? NIOTransportError.connectionClosedBeforeResponse : error
        if let source {
            // What the read held so far comes before the failure, as it would have alone.
            _ = readComplete()
            source.finish(error)
        } else {
            // A gathered body cut after its head: the failure is the body's (a truncation).
            promise.fail(receivedAny ? NIOTransportError.duringBody(error) : error)
        }
    }

    // MARK: Backpressure

    fileprivate func readerCaughtUp() {
        handler?.readerCaughtUp(self)
    }

    fileprivate func readerLeft() {
        guard !finished else { return }
        handler?.abandon(self, with: CancellationError())
    }

    // MARK: Upload

    /// Sends the body from its source, chunk by chunk, each written before the next is read
    /// (so a slow socket slows the producer), then the request's end. The chunks keep to the
    /// declared length (``FramedBody``): a body that breaks it fails before a byte past it, or
    /// its last byte, is written, and the connection is closed.
    func startUpload() {
        guard let upload, let channel else { return }
        let progress = progress
        let expected = upload.length
        uploadTask = Task {
            var sent: Int64 = 0
            do {
                for try await chunk in upload {
                    let total = sent + Int64(chunk.count)
                    // Written and counted in one task on the loop: progress moves as the write
                    // completes, before the loop can read an answer the server could only send
                    // after these bytes (the exchange finishes progress when the head arrives).
                    try await channel.eventLoop.flatSubmit {
                        let written: EventLoopFuture<Void> = channel.writeAndFlush(
                            HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(bytes: chunk))))
                        written.whenSuccess { progress?.update(completed: total, expected: expected) }
                        return written
                    }.get()
                    sent = total
                }
                try await channel.eventLoop.flatSubmit { [sent] in
                    let ended: EventLoopFuture<Void> = channel.writeAndFlush(HTTPClientRequestPart.end(nil))
                    ended.whenSuccess {
                        progress?.update(completed: sent, expected: expected ?? sent)
                        self.requestSent()
                        self.handler?.uploadFinished(self)
                    }
                    return ended
                }.get()
            } catch {
                // A server that answered before reading the whole upload closed or will close the
                // connection: its answer stands (the handler's machine ignores this then).
                channel.eventLoop.execute { self.handler?.uploadFailed(self, with: error) }
            }
        }
    }
}

/// What a body gathered on the loop is held to (``/Courier/GathersUnderRules``): each head and
/// piece is activity for the exchange's idle timer, and past ``gatherLimit(_:)`` raw bytes the
/// call fails with ``tooLarge(_:)`` and its connection closes.
package struct GatheringRules: Sendable {
    /// The exchange's rules.
    let rules: BodyRules
    /// Whether the transport decodes a coded body after gathering it.
    let decodes: Bool
    /// The hop's URL, for the error's head.
    let url: String

    /// The most raw bytes gathered for a response with `head`, or `nil`: the size limit, with
    /// room for a coding's framing when the body is decoded afterwards (gzip and deflate never
    /// grow data by more than that, so a coded body past it decodes past the limit too; the
    /// decoded bytes are held to the limit itself).
    func gatherLimit(_ head: HTTPResponseHead) -> Int? {
        guard let limit = rules.maximumSize else { return nil }
        guard decodes, head.headers.contains(name: "content-encoding") else { return limit }
        return limit > Int.max / 2 ? Int.max : limit + limit / 512 + 64
    }

    /// The error past that limit, keeping `head`.
    func tooLarge(_ head: HTTPResponseHead) -> any Error {
        rules.tooLarge(head: NIOTransport.response(head, url: url))
    }
}

/// Tells the call when the reader of its streamed body wants more, or left.
package struct PiecesDelegate: NIOAsyncSequenceProducerDelegate {
    let call: HTTP1Call
    let loop: any EventLoop

    init(call: HTTP1Call) {
        self.call = call
        self.loop = call.answer.eventLoop
    }

    package func produceMore() {
        let call = self.call
        loop.execute { call.readerCaughtUp() }
    }

    package func didTerminate() {
        let call = self.call
        loop.execute { call.readerLeft() }
    }
}
