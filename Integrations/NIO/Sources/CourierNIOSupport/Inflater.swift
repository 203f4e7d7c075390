import CCourierNIOZlib
@_spi(Transports) import CourierCore
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Decodes a `gzip` or `deflate` response body piece by piece, so that the reader (and the size
/// limit) sees every piece before the next is made: a compression bomb never has more than one
/// piece of output in memory, and a stream cut before its end is noticed.
///
/// Shared with Courier's AsyncHTTPClient transport (SPI `NIOTransports`). Not `Sendable`: one
/// body pump owns it. zlib keeps the address of its stream, so the stream
/// lives in storage of its own.
@_spi(NIOTransports) public final class Inflater {
    /// The most bytes one call to ``inflate(_:emit:)`` hands on at a time.
    public static let pieceSize = 64 << 10

    private let stream: UnsafeMutablePointer<z_stream>
    private var initialized = false
    /// The last member ended (`Z_STREAM_END`) and no input came after it.
    public private(set) var isComplete = false
    /// The first magic byte of a next gzip member, when a read ended just after it.
    private var heldByte: UInt8?
    /// The last call filled its piece without reaching the end: zlib may hold more output for
    /// input it already took, to be asked for before the next input (or the body's end).
    private var outputPending = false

    /// An inflater for `coding`, or `nil` when the body is not coded in a way Courier decodes
    /// (identity, or anything but a single `gzip`, `x-gzip` or `deflate`).
    public init?(contentEncoding coding: String?) {
        guard let coding else { return nil }
        switch coding.trimmingOptionalWhitespace().lowercased() {
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
    public func inflate(_ input: Data, emit: (Data) async throws -> Bool) async throws -> Bool {
        var offset = 0
        while let piece = try nextPiece(of: input, from: &offset) {
            guard try await emit(piece) else { return false }
        }
        return true
    }

    /// The next decoded piece (at most ``pieceSize`` bytes) of `input` from `offset` on, moving
    /// `offset` past the bytes zlib took; `nil` when this input gives no more (all of it taken,
    /// or zlib needs the next input to go on).
    /// - Throws: ``CourierError`` with a ``TransportFailure/Kind/badResponse`` failure for data
    ///   that is not what its `Content-Encoding` says.
    public func nextPiece(of input: Data, from offset: inout Int) throws(CourierError) -> Data? {
        // Until zlib has handed on everything it holds for this input, not only until it took it
        // all: the last call that takes a read's bytes may fill its piece with more to come.
        while offset < input.count || outputPending {
            if offset < input.count, isComplete || heldByte != nil {
                try startNextMember(input, from: &offset)
                if heldByte != nil { return nil }
                continue
            }
            var output = Data(count: Self.pieceSize)
            let start = offset
            let (consumed, produced, status) = input.withUnsafeBytes { inputBytes in
                output.withUnsafeMutableBytes { outputBytes in
                    run(UnsafeRawBufferPointer(rebasing: inputBytes[start...]), into: outputBytes)
                }
            }
            offset += consumed
            switch status {
            case Z_OK, Z_BUF_ERROR: outputPending = produced == Self.pieceSize
            case Z_STREAM_END:
                isComplete = true
                outputPending = false
            default:
                outputPending = false
                throw Self.corrupt("the compressed body is corrupt (zlib status \(status))")
            }
            if produced > 0 {
                output.count = produced
                return output
            }
            // No output and no progress with input left: zlib needs nothing more from this input.
            if consumed == 0, status != Z_STREAM_END { return nil }
        }
        return nil
    }

    /// After a member's end, another gzip member may follow (RFC 1952 §2.2); anything else is
    /// not gzip. Its two magic bytes may come in two reads: the first is held until the second
    /// arrives (and the body is not complete meanwhile).
    private func startNextMember(_ input: Data, from offset: inout Int) throws(CourierError) {
        if heldByte == nil {
            guard input[input.startIndex + offset] == 0x1f else { throw Self.corrupt("data follows the end of the compressed body") }
            offset += 1
            isComplete = false
            guard offset < input.count else {
                heldByte = 0x1f
                return
            }
        }
        guard input[input.startIndex + offset] == 0x8b, inflateReset(stream) == Z_OK else {
            throw Self.corrupt("data follows the end of the compressed body")
        }
        offset += 1
        heldByte = nil
        // zlib reads the new member's header itself, magic bytes included.
        let magic: [UInt8] = [0x1f, 0x8b]
        var none = [UInt8](repeating: 0, count: 1)
        let (consumed, _, status) = magic.withUnsafeBytes { magicBytes in
            none.withUnsafeMutableBytes { run(magicBytes, into: $0) }
        }
        guard consumed == 2, status == Z_OK else { throw Self.corrupt("the compressed body is corrupt (zlib status \(status))") }
    }

    /// One call to zlib: decodes from `input` into `output`.
    /// - Returns: How many bytes zlib took and made, and its status.
    private func run(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> (consumed: Int, produced: Int, status: Int32) {
        guard input.baseAddress == nil else { return run(input, from: input.baseAddress, into: output) }
        // No input (asking zlib for output it holds) may come without an address: zlib reads
        // none of it when `avail_in` is 0, but wants a pointer all the same.
        var nothing: UInt8 = 0
        return withUnsafeBytes(of: &nothing) { run(input, from: $0.baseAddress, into: output) }
    }

    /// ``run(_:into:)`` with the address zlib is given for `input`.
    private func run(
        _ input: UnsafeRawBufferPointer, from inputBase: UnsafeRawPointer?, into output: UnsafeMutableRawBufferPointer
    ) -> (consumed: Int, produced: Int, status: Int32) {
        guard let inputBase, let outputBase = output.baseAddress else { return (0, 0, Z_BUF_ERROR) }
        stream.pointee.next_in = UnsafeMutablePointer(mutating: inputBase.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(input.count)
        stream.pointee.next_out = outputBase.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = uInt(output.count)
        let status = CCourierNIOZlib.inflate(stream, Z_NO_FLUSH)
        let consumed = input.count - Int(stream.pointee.avail_in)
        let produced = output.count - Int(stream.pointee.avail_out)
        stream.pointee.next_in = nil
        stream.pointee.next_out = nil
        return (consumed, produced, status)
    }

    private static func corrupt(_ message: String) -> CourierError {
        CourierError(.transport(TransportFailure(.badResponse, message: message)))
    }
}

extension Inflater {
    /// A body gathered whole, decoded when it has a `gzip` or `deflate` `contentEncoding` (as it
    /// is, otherwise), its decoded bytes held to the size limit of `rules` as they come: a small
    /// body that inflates past it stops there, with the error that keeps `head`. One rule for
    /// both transports on SwiftNIO.
    /// - Throws: ``CourierError`` naming `request`: corrupt or cut compressed data, or past the
    ///   limit.
    public static func decodeWhole(
        _ data: Data, contentEncoding: String?, rules: BodyRules?, request: Request, head: () -> Response
    ) throws(CourierError) -> Data {
        guard let inflater = Inflater(contentEncoding: contentEncoding) else { return data }
        let limit = rules?.maximumSize ?? .max
        var decoded = Data()
        var offset = 0
        while true {
            let piece: Data?
            do {
                piece = try inflater.nextPiece(of: data, from: &offset)
            } catch {
                throw CourierError(error.cause, request: request)
            }
            guard let piece else { break }
            decoded.append(piece)
            if decoded.count > limit, let rules { throw rules.tooLarge(head: head()) }
        }
        guard inflater.isComplete else {
            throw CourierError(
                .transport(TransportFailure(.truncatedBody, message: "the compressed body ended before its end")), request: request)
        }
        return decoded
    }
}
