import CCourierZlib
import CourierCore
import Foundation

/// Decodes a `gzip` or `deflate` response body piece by piece, so that the reader (and the size
/// limit) sees every piece before the next is made: a compression bomb never has more than one
/// piece of output in memory, and a stream cut before its end is noticed.
///
/// Not `Sendable`: one body pump owns it. zlib keeps the address of its stream, so the stream
/// lives in storage of its own.
final class Inflater {
    /// The most bytes one call to ``inflate(_:emit:)`` hands on at a time.
    static let pieceSize = 64 << 10

    private let stream: UnsafeMutablePointer<z_stream>
    private var initialized = false
    /// The last member ended (`Z_STREAM_END`) and no input came after it.
    private(set) var isComplete = false

    /// An inflater for `coding`, or `nil` when the body is not coded in a way Courier decodes
    /// (identity, or anything but a single `gzip`, `x-gzip` or `deflate`).
    init?(contentEncoding coding: String?) {
        guard let coding else { return nil }
        switch coding.trimmingCharacters(in: .whitespaces).lowercased() {
        case "gzip", "x-gzip", "deflate": break
        default: return nil
        }
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // 15 + 32: the largest window, with the gzip or zlib header detected automatically.
        guard inflateInit2_(stream, 15 + 32, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            return nil
        }
        initialized = true
    }

    deinit {
        if initialized { inflateEnd(stream) }
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Decodes `input`, calling `emit` with each piece of at most ``pieceSize`` bytes; stops early
    /// (returning `false`) when `emit` does.
    /// - Throws: ``CourierError`` with a ``TransportFailure/Kind/badResponse`` failure for data
    ///   that is not what its `Content-Encoding` says.
    func inflate(_ input: Data, emit: (Data) async throws -> Bool) async throws -> Bool {
        var offset = 0
        while offset < input.count {
            if isComplete {
                // Another gzip member may follow (RFC 1952 §2.2); anything else is not gzip.
                guard input.count - offset >= 2, input[input.startIndex + offset] == 0x1f, input[input.startIndex + offset + 1] == 0x8b,
                    inflateReset(stream) == Z_OK
                else { throw Self.corrupt("data follows the end of the compressed body") }
                isComplete = false
            }
            var output = Data(count: Self.pieceSize)
            let (consumed, produced, status) = input.withUnsafeBytes { inputBytes -> (Int, Int, Int32) in
                output.withUnsafeMutableBytes { outputBytes -> (Int, Int, Int32) in
                    let available = inputBytes.count - offset
                    stream.pointee.next_in = UnsafeMutablePointer(
                        mutating: inputBytes.baseAddress!.advanced(by: offset).assumingMemoryBound(to: Bytef.self))
                    stream.pointee.avail_in = uInt(available)
                    stream.pointee.next_out = outputBytes.baseAddress!.assumingMemoryBound(to: Bytef.self)
                    stream.pointee.avail_out = uInt(outputBytes.count)
                    let status = CCourierZlib.inflate(stream, Z_NO_FLUSH)
                    let consumed = available - Int(stream.pointee.avail_in)
                    let produced = outputBytes.count - Int(stream.pointee.avail_out)
                    stream.pointee.next_in = nil
                    stream.pointee.next_out = nil
                    return (consumed, produced, status)
                }
            }
            offset += consumed
            switch status {
            case Z_OK, Z_BUF_ERROR: break
            case Z_STREAM_END: isComplete = true
            default: throw Self.corrupt("the compressed body is corrupt (zlib status \(status))")
            }
            if produced > 0 {
                output.count = produced
                guard try await emit(output) else { return false }
            } else if consumed == 0, status != Z_STREAM_END {
                // No progress with input left: zlib needs nothing more from this call.
                break
            }
        }
        return true
    }

    private static func corrupt(_ message: String) -> CourierError {
        CourierError(.transport(TransportFailure(.badResponse, message: message)))
    }
}
