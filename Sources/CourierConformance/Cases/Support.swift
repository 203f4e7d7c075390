import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What httpbin's `/headers` echoes.
struct EchoedHeaders: Decodable, Sendable {
    var headers: [String: String]
}

/// What httpbin's `/anything` echoes (the parts the cases read).
struct Anything: Decodable, Sendable {
    var method: String
    var data: String
    var headers: [String: String]
    var form: [String: String]?
}

/// What the stream server's `/upload` received.
struct Received: Decodable, Sendable {
    var length: Int
    var crc32: UInt32
    var contentType: String?
    /// How the body was framed: `length` (`Content-Length`), `chunked`, or `none`.
    var framing: String?

    enum CodingKeys: String, CodingKey {
        case length, crc32, framing
        case contentType = "content_type"
    }
}

/// What the stream server's `/uploaded` says of an upload made with a key.
struct Uploaded: Decodable, Sendable {
    /// Body bytes read so far.
    var length: Int
    /// Whether the body ended as its framing says.
    var complete: Bool
    /// Whether the server stopped reading it.
    var done: Bool
}

/// Byte `i` of the stream server's `/file` bodies: `i % 251`.
func streamServerBytes(_ range: Range<Int>) -> Data {
    Data(range.map { UInt8($0 % 251) })
}

/// A file in the temporary directory, removed (with a download's `.partial` files) by `cleanUp`.
func temporaryFile() -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("courier-conformance-\(UUID().uuidString).bin")
}

/// Removes `file` and the `.partial` files a download may have left beside it.
func cleanUp(_ file: URL) {
    for suffix in ["", ".partial", ".partial.validator"] { try? FileManager.default.removeItem(atPath: file.path + suffix) }
}

/// Chunks an upload's producer made, counted across the tasks a case starts. `@unchecked Sendable` is sound: the
/// value is read and written only while the lock is held.
final class ProducedChunks: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    /// Adds one.
    func increment() {
        lock.lock()
        defer { lock.unlock() }
        count += 1
    }

    /// The count now.
    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }
}

/// A loopback address where nothing listens (a port the system just handed out and took back):
/// a connection to it is refused at once.
func refusedOrigin() -> String {
    #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
    #endif
    guard descriptor >= 0 else { return "http://127.0.0.1:9" }
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
    }
    guard bound else { return "http://127.0.0.1:9" }
    return "http://127.0.0.1:\(UInt16(bigEndian: address.sin_port))"
}

/// A one-shot signal a case waits for: progress, not a guess at how long something takes.
final class Signal: @unchecked Sendable {
    // `@unchecked Sendable` is sound: the state is read and written only while the lock is held.
    private let lock = NSLock()
    private var fired = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    /// Fires the signal, waking every waiter; later waits return at once.
    func fire() {
        lock.lock()
        fired = true
        let woken = waiters
        waiters = []
        lock.unlock()
        for waiter in woken { waiter.resume() }
    }

    /// Returns once the signal has fired.
    func wait() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            lock.lock()
            if fired {
                lock.unlock()
                waiter.resume()
            } else {
                waiters.append(waiter)
                lock.unlock()
            }
        }
    }
}

/// A request body that hands over `first`, fires `taken` when the transport asks for more, and
/// then produces nothing until it is cancelled: an upload that is under way and stalled.
struct StallingBody: AsyncSequence, Sendable {
    typealias Element = Data
    let first: Data
    let taken: Signal

    func makeAsyncIterator() -> Iterator { Iterator(first: first, taken: taken) }

    struct Iterator: AsyncIteratorProtocol {
        var first: Data?
        let taken: Signal

        mutating func next() async throws -> Data? {
            if let chunk = first {
                first = nil
                return chunk
            }
            taken.fire()
            try await Task.sleep(for: .seconds(86_400))
            return nil
        }
    }
}

/// A request body produced at a steady pace: `count` chunks of `size` bytes, `gap` apart. (A
/// body that stalls for good would hold up every other URLSession transfer of the process on
/// Linux, the case's own checks included: the Known limits article.)
struct PacedBody: AsyncSequence, Sendable {
    typealias Element = Data
    var count: Int
    var size: Int
    var gap: Duration
    /// Fired when the transport asks for chunk `after + 1`: it has taken `after` chunks.
    var taken: (after: Int, signal: Signal)? = nil

    func makeAsyncIterator() -> Iterator { Iterator(body: self) }

    struct Iterator: AsyncIteratorProtocol {
        let body: PacedBody
        var produced = 0

        mutating func next() async throws -> Data? {
            guard produced < body.count else { return nil }
            if let taken = body.taken, produced == taken.after { taken.signal.fire() }
            produced += 1
            try await Task.sleep(for: body.gap)
            return Data(repeating: 0x50, count: body.size)
        }
    }
}
