import NIOHTTP1

/// The informational (1xx) heads a server sent before its answer, bounded: RFC 9110 §15.2 lets a
/// server send any number of them, so a hostile one could keep a client parsing `103`s forever
/// (1.4 million in 5 s, seen before this bound). A few are normal (`100 Continue`, one or two
/// `103 Early Hints`, a `102 Processing` now and then during a long operation); past
/// ``mostHeads`` heads or ``mostBytes`` bytes of their fields, the answer is a
/// ``NIOTransportError/tooManyInformationalHeads(_:)`` (a `badResponse`) and the connection is
/// closed.
struct InformationalHeads {
    /// The most informational heads before an answer.
    static let mostHeads = 32
    /// The most bytes of their status lines and fields, together.
    static let mostBytes = 256 << 10

    /// Which bound a server went past.
    enum Excess: Equatable, Sendable, CustomStringConvertible {
        case heads
        case bytes

        var description: String {
            switch self {
            case .heads: "the server sent more than \(InformationalHeads.mostHeads) informational (1xx) heads before its answer"
            case .bytes: "the server sent more than \(InformationalHeads.mostBytes >> 10) KiB of informational (1xx) heads before its answer"
            }
        }
    }

    private(set) var count = 0
    private(set) var bytes = 0

    /// Counts `head`; the bound it went past, if any.
    mutating func count(_ head: HTTPResponseHead) -> Excess? {
        count += 1
        // "HTTP/1.1 103 Early Hints\r\n", and each field as "name: value\r\n".
        bytes += 17 + head.status.reasonPhrase.utf8.count
        for (name, value) in head.headers { bytes += name.utf8.count + value.utf8.count + 4 }
        if count > Self.mostHeads { return .heads }
        if bytes > Self.mostBytes { return .bytes }
        return nil
    }
}
