import CourierCore
import Foundation

/// An `InputStream` fed by an async producer: how a one-shot byte sequence becomes a request body
/// that URLSession reads as it is produced, in bounded memory.
///
/// FoundationNetworking reads a body stream on its session's work queue, with blocking reads;
/// ``read(_:maxLength:)`` and ``hasBytesAvailable`` therefore block that thread until the producer
/// has written or finished. ``URLSessionExecutor`` gives each such upload a session of its own, so
/// a slow producer holds up no other transfer. The producer waits (without blocking a thread)
/// while `limit` bytes are unread. ``close()`` (by the reader, or by cancellation) aborts the
/// body: a blocked or later read *fails*, so libcurl ends the transfer without the last chunk of
/// a chunked body (a clean end there would make the server take the start of the body for all of
/// it), and the producer stops.
///
/// The shared state is a ``PipeBuffer`` (the `InputStream` itself cannot be `Sendable`).
final class BodyPipe: InputStream {
    /// The buffer the producer writes to and the stream reads from.
    let buffer: PipeBuffer

    init(limit: Int = 1 << 20) {
        buffer = PipeBuffer(limit: limit)
        super.init(data: Data())
    }

    override func open() { buffer.open() }
    override func close() { buffer.abort() }
    var status: Stream.Status { buffer.status }
    override var hasBytesAvailable: Bool { buffer.waitForBytes() }
    override func read(_ destination: UnsafeMutablePointer<UInt8>, maxLength length: Int) -> Int {
        buffer.read(into: destination, maxLength: length)
    }
    override func getBuffer(
        _ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, length len: UnsafeMutablePointer<Int>
    ) -> Bool { false }
}

/// The bytes between a producer task and the thread reading a ``BodyPipe``.
///
/// `@unchecked Sendable` is sound: every stored mutable property is read and written only while
/// `condition` is locked.
final class PipeBuffer: @unchecked Sendable {
    private let condition = NSCondition()
    private var chunks: [Data] = []
    private var offset = 0
    private var buffered = 0
    private var finished = false
    private var failed = false
    private var closed = false
    /// A read has returned the end of the body: the reader will not read again.
    private var endDelivered = false
    private var opened = false
    private var writer: CheckedContinuation<Bool, Never>?
    private let limit: Int

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    // MARK: Producer

    /// Appends `chunk`, waiting while the buffer is full. Returns `false` once the reader is gone.
    func write(_ chunk: Data) async -> Bool {
        guard !chunk.isEmpty else { return true }
        while true {
            let ready: Bool? = locked {
                if closed || finished { return false }
                if buffered == 0 || buffered + chunk.count <= limit {
                    chunks.append(chunk)
                    buffered += chunk.count
                    condition.broadcast()
                    return true
                }
                return nil
            }
            if let ready { return ready }
            let open = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let now: Bool? = locked {
                    if closed || finished { return false }
                    if buffered == 0 || buffered + chunk.count <= limit { return true }
                    writer = continuation
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
            if !open { return false }
        }
    }

    /// Ends the body: normally, or as a failed read (the transfer then fails).
    func finish(failed didFail: Bool = false) {
        let waiting = locked { () -> CheckedContinuation<Bool, Never>? in
            finished = true
            failed = didFail
            condition.broadcast()
            defer { writer = nil }
            return writer
        }
        waiting?.resume(returning: false)
    }

    // MARK: Reader

    func open() { locked { opened = true } }

    /// Stops both sides: what is buffered is dropped, a blocked or later read fails (so the
    /// transfer ends without the end of the body), and the producer stops.
    /// - Returns: Whether the reader had not read the end of the body yet, so its next read fails
    ///   and ends the transfer; `false` when it already had the whole body (the transfer must
    ///   then be cancelled another way).
    @discardableResult
    func abort() -> Bool {
        let (waiting, outstanding) = locked { () -> (CheckedContinuation<Bool, Never>?, Bool) in
            closed = true
            chunks = []
            offset = 0
            buffered = 0
            condition.broadcast()
            defer { writer = nil }
            return (writer, !endDelivered)
        }
        waiting?.resume(returning: false)
        return outstanding
    }

    var status: Stream.Status {
        locked {
            if closed { return .error }
            if failed { return .error }
            if finished && buffered == 0 { return .atEnd }
            return opened ? .open : .notOpen
        }
    }

    /// Blocks until bytes are there or the body has ended; `false` at a clean end.
    func waitForBytes() -> Bool {
        locked {
            while buffered == 0 && !finished && !closed { condition.wait() }
            // A failed or aborted body must be read (and fail the read): FoundationNetworking
            // takes "no bytes available" for a clean end.
            return buffered > 0 || failed || closed
        }
    }

    /// Blocks until bytes are there; copies up to `length`; 0 at a clean end, -1 after a failure
    /// or an abort.
    func read(into buffer: UnsafeMutablePointer<UInt8>, maxLength length: Int) -> Int {
        guard length > 0 else { return 0 }
        let (count, waiting) = locked { () -> (Int, CheckedContinuation<Bool, Never>?) in
            while buffered == 0 && !finished && !closed { condition.wait() }
            if closed { return (-1, nil) }
            if buffered == 0 {
                if !failed { endDelivered = true }
                return (failed ? -1 : 0, nil)
            }
            var copied = 0
            while copied < length, !chunks.isEmpty {
                let chunk = chunks[0]
                let take = min(length - copied, chunk.count - offset)
                chunk.withUnsafeBytes { raw in
                    guard let base = raw.baseAddress else { return }
                    (buffer + copied).update(from: base.assumingMemoryBound(to: UInt8.self) + offset, count: take)
                }
                copied += take
                offset += take
                if offset == chunk.count {
                    chunks.removeFirst()
                    offset = 0
                }
            }
            buffered -= copied
            // Room again: let a waiting producer go on.
            guard buffered <= limit / 2 else { return (copied, nil) }
            defer { writer = nil }
            return (copied, writer)
        }
        waiting?.resume(returning: true)
        return count
    }

    private func locked<Value>(_ body: () -> Value) -> Value {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }
}
