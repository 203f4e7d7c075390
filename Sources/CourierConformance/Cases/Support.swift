import Foundation

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

    enum CodingKeys: String, CodingKey {
        case length, crc32
        case contentType = "content_type"
    }
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

/// A count shared between a case and the tasks it starts. `@unchecked Sendable` is sound: the
/// value is read and written only while the lock is held.
final class Counter: @unchecked Sendable {
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
