// fuzz: seeded-runs 25000
// fuzz: sources Integrations/NIO/Sources/CourierNIOSupport/Inflater.swift
// fuzz: flags -I Integrations/NIO/Sources/CCourierNIOZlib
import CCourierNIOZlib
import CourierCore
import Foundation

/// gzip and deflate response bodies as the SwiftNIO transports (Courier's own and the one on
/// AsyncHTTPClient) decode them. The first byte chooses the mode, the second where the body is
/// split in two reads:
/// - hostile: the rest is the body as sent. Decoding fails only with `CourierError`; no piece is
///   over ``Inflater/pieceSize``; splitting the body changes neither the outcome nor the bytes out
///   (up to where a corrupt body stops each);
///   output is read up to 1 MiB (as a reader's limit would), however small the input.
/// - round trip: the rest is compressed here (gzip or zlib, any level, one or two gzip members)
///   and must decode to itself, complete, whole or split.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    guard count >= 2 else { return 0 }
    let mode = bytes[0], splitByte = Int(bytes[1])
    let rest = Data(bytes: bytes + 2, count: count - 2)
    if mode & 1 == 0 {
        let split = rest.isEmpty ? 0 : splitByte % (rest.count + 1)
        let whole = withinBudget("Inflater") { decode([rest]) }
        let pieces = decode([rest.prefix(split), rest.dropFirst(split)])
        if whole.capped || pieces.capped || (whole.failed && pieces.failed) {
            // Cut short (by the cap, or by corrupt data, where zlib may stop before or after
            // handing over the piece the bad byte was in): the same stream up to where each stopped.
            let shorter = min(whole.output.count, pieces.output.count)
            require(whole.output.prefix(shorter) == pieces.output.prefix(shorter), "splitting changed the bytes out")
            require(whole.failed == pieces.failed || whole.capped || pieces.capped, "split at \(split), the body gave \(pieces), whole \(whole)")
        } else {
            require(whole == pieces, "split at \(split), the body gave \(pieces), whole \(whole)")
        }
    } else {
        let gzip = mode & 2 == 0
        let level = Int32(mode >> 2) % 10
        var body = compress(rest, gzip: gzip, level: level)
        var expected = rest
        if gzip, mode & 0x80 != 0 {
            let second = Data(rest.reversed())
            body += compress(second, gzip: true, level: level)
            expected += second
        }
        let split = body.isEmpty ? 0 : splitByte % (body.count + 1)
        for chunks in [[body], [body.prefix(split), body.dropFirst(split)]] {
            let decoded = decode(chunks)
            require(!decoded.capped && !decoded.failed && decoded.complete, "a valid body did not decode")
            require(decoded.output == expected, "a body decoded to other bytes")
        }
    }
    return 0
}

private let cap = 1 << 20

private struct Outcome: Equatable, CustomStringConvertible {
    var output = Data()
    var failed = false
    var complete = false
    var capped = false
    var description: String { "\(output.count) bytes\(failed ? ", failed" : "")\(complete ? ", complete" : "")\(capped ? ", capped" : "")" }
}

private func decode(_ chunks: [Data]) -> Outcome {
    guard let inflater = Inflater(contentEncoding: "gzip") else { fail("no inflater for gzip") }
    var outcome = Outcome()
    do {
        for chunk in chunks {
            var offset = 0
            while let piece = try inflater.nextPiece(of: Data(chunk), from: &offset) {
                require(!piece.isEmpty && piece.count <= Inflater.pieceSize, "a piece of \(piece.count) bytes")
                outcome.output += piece
                if outcome.output.count >= cap {
                    outcome.capped = true
                    return outcome
                }
            }
            require(offset <= chunk.count, "read past the input")
        }
    } catch {
        outcome.failed = true
    }
    outcome.complete = inflater.isComplete
    return outcome
}

/// `data` compressed by zlib itself: a gzip member or a zlib stream.
private func compress(_ data: Data, gzip: Bool, level: Int32) -> Data {
    var stream = z_stream()
    guard deflateInit2_(&stream, level, Z_DEFLATED, gzip ? 31 : 15, 8, Z_DEFAULT_STRATEGY, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK
    else { fail("deflateInit2 failed") }
    defer { deflateEnd(&stream) }
    var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(data.count))) + 64)
    var input = [UInt8](data)
    let status = input.withUnsafeMutableBufferPointer { inputBytes in
        output.withUnsafeMutableBufferPointer { outputBytes in
            stream.next_in = inputBytes.baseAddress
            stream.avail_in = uInt(inputBytes.count)
            stream.next_out = outputBytes.baseAddress
            stream.avail_out = uInt(outputBytes.count)
            return deflate(&stream, Z_FINISH)
        }
    }
    require(status == Z_STREAM_END, "deflate did not finish: \(status)")
    return Data(output.prefix(Int(stream.total_out)))
}
