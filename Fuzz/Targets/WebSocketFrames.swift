// fuzz: seeded-runs 200000
@testable import CourierCore
@testable import CourierWebSocket
import Foundation

/// WebSocket frames from a hostile server (RFC 6455 §5), through the client's parser and message
/// assembly: what CourierWebSocket's read loop does with every byte. The first byte picks where
/// the rest is split and whether compression (RSV1) was negotiated. Rules checked beyond "no
/// crash":
/// - chunk boundaries change neither the events nor the failure;
/// - a failure is a `WebSocketFailure` with a close code that may be sent;
/// - no frame and no message over the limit; every text message is exactly its UTF-8 bytes;
/// - never more payload out than bytes in (without compression: with it, a message inflates, but
///   never past the limit); every frame parsed encodes back to one that parses the same.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let control = bytes[0]
    let input = Data(bytes: bytes + 1, count: count - 1)
    let split = Int(control >> 1) % (input.count + 1)
    let compression = control & 1 == 1
    let whole = read([input], compression: compression)
    let pieces = read([input.prefix(split), input.dropFirst(split)], compression: compression)
    require(whole.events == pieces.events, "chunk boundaries changed the events")
    require(whole.failure == pieces.failure, "chunk boundaries changed the failure")
    if let failure = whole.failure {
        require(failure.closeCode?.mayBeSent == true, "a failure without a close code that may be sent: \(failure)")
    }
    var out = 0
    for event in whole.events {
        switch event {
        case .message(.text(let text)):
            out += text.utf8.count
            require(text.utf8.count <= limit, "a text message over the limit")
        case .message(.binary(let data)):
            out += data.count
            require(data.count <= limit, "a binary message over the limit")
        case .ping(let data), .pong(let data):
            out += data.count
            require(data.count <= 125, "a control frame over 125 bytes")
        case .close(_, let reason):
            require(reason.utf8.count <= 123, "a close reason over 123 bytes")
        }
    }
    require(compression || out <= input.count, "more payload out than bytes in")
    for frame in whole.frames {
        var again = FrameParser(role: .client, maximumFrameSize: limit, allowsCompression: compression)
        again.append(frame.encoded(mask: nil))
        require((try? again.next()) == frame, "a frame did not encode back to itself")
    }
    return 0
}

private let limit = 4096

private func read(_ chunks: [Data], compression: Bool) -> (events: [MessageAssembler.Event], frames: [WebSocketFrame], failure: WebSocketFailure?) {
    var parser = FrameParser(role: .client, maximumFrameSize: limit, allowsCompression: compression)
    let negotiated = compression ? NegotiatedCompression(serverNoContextTakeover: false, serverMaxWindowBits: 15, clientMaxWindowBits: 15) : nil
    var assembler = MessageAssembler(maximumMessageSize: limit, compression: negotiated)
    var events: [MessageAssembler.Event] = []
    var frames: [WebSocketFrame] = []
    do {
        for chunk in chunks {
            parser.append(chunk)
            while let frame = try parser.next() {
                require(frame.payload.count <= limit, "a frame over the limit")
                frames.append(frame)
                if let event = try assembler.take(frame) { events.append(event) }
            }
        }
        return (events, frames, nil)
    } catch {
        return (events, frames, error)
    }
}
