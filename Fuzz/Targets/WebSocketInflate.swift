// fuzz: seeded-runs 50000
// fuzz: flags -I Integrations/NIO/Sources/CCourierNIOZlib
import CCourierNIOZlib
@testable import CourierCore
@testable import CourierWebSocket
import Foundation

/// permessage-deflate's inflater and deflater (CourierWebSocket, in Swift) against zlib itself.
/// The first byte chooses the mode:
/// - hostile (bit 0 clear): the rest is a message's payload from a hostile server. Courier's
///   inflater and zlib's (raw, 32 KiB window) read the same bytes, with `00 00 FF FF` appended as
///   RFC 7692 asks, and must agree: the same bytes out when Courier's succeeds; zlib finds the data
///   corrupt exactly when Courier's does (or zlib waits for bytes that never come); never more
///   than the limit out, and a bomb fails at it. Inflating takes the input's budget of CPU.
/// - round trip (bit 0 set): the rest, cut into messages where byte 0xFF is, is compressed by
///   zlib (any level, strategy and window, a sync flush per message, the context taken over) and
///   must inflate to itself message by message; and each message compressed by Courier's deflater
///   (within the window of the first byte's bits) must inflate to itself in Courier's inflater and
///   in zlib's, held to that window: on its own, and with the context taken over (each message
///   compressed with the ones before it as history, read by one running inflater of each).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let control = bytes[0]
    let rest = [UInt8](UnsafeBufferPointer(start: bytes + 1, count: count - 1))
    if control & 1 == 0 {
        hostile(rest)
    } else {
        roundTrip(rest, control: control)
    }
    return 0
}

private let limit = 64 << 10
private let tail: [UInt8] = [0x00, 0x00, 0xFF, 0xFF]

private func hostile(_ payload: [UInt8]) {
    let input = payload + tail
    var inflater = Inflater()
    let ours = withinBudget("Inflater") { Result { () throws(Inflater.Failure) in try inflater.inflate(input, limit: limit, keepsWindow: true) } }
    let zlib = zlibInflate([input], windowBits: 15, cap: limit + 1)  // one buffer: the limit's
    switch ours {
    case .success(let output):
        require(output.count <= limit, "more than the limit out")
        require(zlib.status != Z_DATA_ERROR, "Courier inflated what zlib finds corrupt (\(zlib))")
        require(zlib.outputs.first == output, "Courier inflated \(output.count) bytes, zlib \(zlib)")
    case .failure(.corrupt(let reason)):
        require(zlib.status == Z_DATA_ERROR || zlib.waiting, "Courier found corrupt (\(reason)) what zlib inflates (\(zlib))")
    case .failure(.truncated):
        require(zlib.status != Z_STREAM_END && (zlib.waiting || zlib.status == Z_DATA_ERROR), "Courier found truncated what zlib ends (\(zlib))")
    case .failure(.tooLarge):
        require((zlib.outputs.first?.count ?? 0) > limit, "Courier stopped at the limit, zlib gave \(zlib)")
    }
    if zlib.status == Z_DATA_ERROR {
        guard case .failure(let failure) = ours, failure != .tooLarge else { fail("zlib finds corrupt what Courier inflates (\(ours))") }
    }
}

private func roundTrip(_ rest: [UInt8], control: UInt8) {
    let messages = rest.split(separator: 0xFF, omittingEmptySubsequences: false).map(Array.init)
    let windowBits = 8 + Int(control >> 1) % 8
    let level = Int32(control >> 4) % 10
    let strategy: Int32 = [Z_DEFAULT_STRATEGY, Z_FILTERED, Z_HUFFMAN_ONLY, Z_RLE][Int(control >> 2) % 4]
    // zlib's raw deflate takes no 8-bit window; it uses 9.
    let compressed = zlibDeflate(messages, windowBits: max(9, windowBits), level: level, strategy: strategy)
    var inflater = Inflater()
    for (message, payload) in zip(messages, compressed) {
        let inflated = try? inflater.inflate(payload + tail, limit: limit, keepsWindow: true)
        require(inflated == message, "zlib's message of \(message.count) bytes did not inflate to itself")
    }
    for message in messages {
        let payload = Deflater.compress(message, windowBits: windowBits)
        var fresh = Inflater()
        require((try? fresh.inflate(payload + tail, limit: limit, keepsWindow: false)) == message, "the deflater's message did not inflate to itself")
        let zlib = zlibInflate([payload + tail], windowBits: windowBits, cap: message.count + 1)
        require(zlib.status != Z_DATA_ERROR && zlib.outputs.first == message, "zlib read the deflater's message (window \(windowBits)) as \(zlib)")
    }
    // The context taken over: each message compressed with the ones before it as its history,
    // read by one inflater (Courier's, then zlib's one stream) whose window runs across them.
    var context = Deflater.Context(windowBits: windowBits)
    let payloads = messages.map { Deflater.compress($0, context: &context) }
    var running = Inflater()
    for (message, payload) in zip(messages, payloads) {
        require((try? running.inflate(payload + tail, limit: limit, keepsWindow: true)) == message, "the deflater's message with its history did not inflate to itself")
    }
    let cap = (messages.map(\.count).max() ?? 0) + 1
    let zlib = zlibInflate(payloads.map { $0 + tail }, windowBits: windowBits, cap: cap)
    require(zlib.status != Z_DATA_ERROR && zlib.outputs == messages, "zlib read the deflater's messages with their history (window \(windowBits)) as \(zlib)")
}

private struct ZlibOutcome: CustomStringConvertible {
    var outputs: [[UInt8]] = []
    var status: Int32 = Z_OK
    /// Whether zlib took every byte and waits for more (no end, no error).
    var waiting = false
    var description: String { "\(outputs.map(\.count)) bytes, status \(status)\(waiting ? ", waiting" : "")" }
}

/// `messages` inflated by one zlib stream (raw, `windowBits`), each with a sync flush, at most
/// `cap` bytes each.
private func zlibInflate(_ messages: [[UInt8]], windowBits: Int32, cap: Int) -> ZlibOutcome {
    var stream = z_stream()
    guard inflateInit2_(&stream, -windowBits, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else { fail("inflateInit2 failed") }
    defer { inflateEnd(&stream) }
    var outcome = ZlibOutcome()
    for var message in messages {
        var output = [UInt8](repeating: 0, count: cap)
        let status = message.withUnsafeMutableBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                stream.next_in = input.baseAddress
                stream.avail_in = uInt(input.count)
                stream.next_out = out.baseAddress
                stream.avail_out = uInt(out.count)
                return inflate(&stream, Z_SYNC_FLUSH)
            }
        }
        outcome.outputs.append(Array(output.prefix(cap - Int(stream.avail_out))))
        outcome.status = status
        outcome.waiting = (status == Z_OK || status == Z_BUF_ERROR) && stream.avail_in == 0 && stream.avail_out > 0
        if status != Z_OK && status != Z_BUF_ERROR { break }
    }
    return outcome
}

private func zlibInflate(_ messages: [[UInt8]], windowBits: Int, cap: Int) -> ZlibOutcome {
    zlibInflate(messages, windowBits: Int32(windowBits), cap: cap)
}

/// `messages` compressed by one zlib stream (raw), a sync flush after each, its `00 00 FF FF`
/// left off (RFC 7692 §7.2.1).
private func zlibDeflate(_ messages: [[UInt8]], windowBits: Int, level: Int32, strategy: Int32) -> [[UInt8]] {
    var stream = z_stream()
    guard deflateInit2_(&stream, level, Z_DEFLATED, -Int32(windowBits), 8, strategy, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK
    else { fail("deflateInit2 failed") }
    defer { deflateEnd(&stream) }
    var result: [[UInt8]] = []
    for var message in messages {
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(message.count))) + 64)
        let status = message.withUnsafeMutableBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                stream.next_in = input.baseAddress
                stream.avail_in = uInt(input.count)
                stream.next_out = out.baseAddress
                stream.avail_out = uInt(out.count)
                return deflate(&stream, Z_SYNC_FLUSH)
            }
        }
        if message.isEmpty, status == Z_BUF_ERROR {
            // A second flush with nothing between writes nothing; an empty message is then sent
            // as one empty stored block's header (RFC 7692 §7.2.3.6).
            result.append([0x00])
            continue
        }
        require(status == Z_OK && stream.avail_in == 0, "deflate did not take the message: \(status)")
        let written = Array(output.prefix(output.count - Int(stream.avail_out)))
        require(written.suffix(4) == tail[...], "zlib's sync flush did not end with 00 00 FF FF")
        result.append(Array(written.dropLast(4)))
    }
    return result
}
