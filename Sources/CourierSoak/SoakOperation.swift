import CourierCore
import CourierResilience
import CourierTesting
import Foundation

/// One kind of call a soak makes, and the failures it injects on purpose.
///
/// Each is a different path through an executor: buffered bodies small and large, a stream of
/// server-sent events left early, a download cut and resumed, uploads, a call cancelled at a
/// random moment, a call past its deadline, a redirect chain, a `401` answered by refreshing
/// a token, and WebSockets (on transports that upgrade connections, with the peer given).
public enum SoakOperation: String, Sendable, Hashable, CaseIterable, Comparable {
    /// `GET` a 100-byte body, read whole.
    case small
    /// `GET` a 1 MiB body, read whole.
    case large
    /// Server-sent events, left after a few (the body cancelled).
    case eventsLeftEarly
    /// A 256 KiB download cut by the server, then resumed from where it stopped; the file must be
    /// the server's, byte for byte.
    case downloadCutAndResumed
    /// `POST` 16–512 KiB and check what arrived.
    case upload
    /// A slow 4 MiB body, its task cancelled 0–200 ms in.
    case cancelled
    /// A body that stalls, past a 300 ms deadline.
    case timedOut
    /// Three redirects, then `200`.
    case redirected
    /// A `401` for a token the server no longer takes, refreshed and retried.
    case refreshed
    /// A WebSocket to the echo peer (``ConformanceServers/webSocket``; compressed with
    /// permessage-deflate every other time when the compressing peer is given too): echoes of 1
    /// byte to 64 KiB, text and binary, then the client's closing handshake, its end checked.
    case webSocket
    /// A WebSocket reading a flood of messages, its task cancelled after a few: the socket closes
    /// at once, and nothing of it stays behind.
    case webSocketCancelled

    /// The weight of each operation in the mix, out of 100 (an operation the transport cannot run
    /// is left out, the others keeping their proportions).
    var weight: Int {
        switch self {
        case .small: 24
        case .large: 10
        case .eventsLeftEarly: 10
        case .downloadCutAndResumed: 8
        case .upload: 10
        case .cancelled: 8
        case .timedOut: 4
        case .redirected: 10
        case .refreshed: 10
        case .webSocket: 4
        case .webSocketCancelled: 2
        }
    }

    /// The error types (``CourierCore/CourierError/errorType``) this operation causes on purpose.
    var injected: Set<String> {
        switch self {
        case .downloadCutAndResumed: ["truncatedBody"]
        case .cancelled, .webSocketCancelled: ["cancelled"]
        case .timedOut: ["timedOut"]
        default: []
        }
    }

    /// Orders operations as declared.
    public static func < (lhs: SoakOperation, rhs: SoakOperation) -> Bool {
        allCases.firstIndex(of: lhs) ?? 0 < allCases.firstIndex(of: rhs) ?? 0
    }

    /// Whether the operation opens a WebSocket: only a transport that upgrades connections,
    /// with a WebSocket peer given, runs it.
    var needsWebSocket: Bool { self == .webSocket || self == .webSocketCancelled }

    /// An operation drawn by weight from `operations` (every one by default).
    static func random(using random: RandomSource, among operations: [SoakOperation] = allCases) -> SoakOperation {
        let total = operations.reduce(0) { $0 + $1.weight }
        guard total > 0 else { return .small }
        var roll = Int(random.next() % UInt64(total))
        for operation in operations {
            if roll < operation.weight { return operation }
            roll -= operation.weight
        }
        return .small
    }
}
