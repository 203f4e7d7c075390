import CCourierNIOZlib
@_spi(NIOTransports) import CourierNIOSupport
import Foundation
import Testing

/// The inflater the transport decodes `gzip` and `deflate` bodies with, fed as the network feeds
/// it: the rules the `Inflate` fuzz target (Fuzz/Targets/Inflate.swift) checks.
@Suite("Inflater")
struct InflaterTests {
    /// Reads `chunks` as a body's reads: the bytes out, and whether the body ended complete.
    func inflate(_ chunks: [Data]) async throws -> (Data, complete: Bool) {
        let inflater = try #require(Inflater(contentEncoding: "gzip"))
        var output = Data()
        for chunk in chunks {
            _ = try await inflater.inflate(chunk) { piece in
                output += piece
                return true
            }
        }
        return (output, inflater.isComplete)
    }

    /// Found by the fuzz target: a body of two gzip members (RFC 1952 §2.2 allows several) whose
    /// second member's two magic bytes came in two reads failed as "data follows the end of
    /// the compressed body". A read may end at any byte: every split of the body decodes whole.
    @Test func aBodyOfTwoMembersDecodesWhereverAReadEnds() async throws {
        let first = Data("first member, ".utf8), second = Data("and the second".utf8)
        let body = gzip(first) + gzip(second)
        for split in 0...body.count {
            let (output, complete) = try await inflate([body.prefix(split), body.dropFirst(split)])
            #expect(output == first + second, "split at \(split)")
            #expect(complete, "split at \(split)")
        }
    }

    /// Found by the fuzz target (rule: splitting a body changes neither the outcome nor the bytes
    /// out): when zlib took the last bytes of a read in the same call that filled a piece, the
    /// output it still held was handed on only with the next read, and never when the body
    /// ended there: this hostile body gave 240 bytes fewer read whole than split at byte 225.
    @Test func whatZlibStillHoldsWhenAReadEndsIsHandedOnAtOnce() async throws {
        let body = Self.fromFuzzer
        let (whole, _) = try await inflate([body])
        for split in [0, 100, 225, 300, body.count] {
            let (pieces, _) = try await inflate([body.prefix(split), body.dropFirst(split)])
            #expect(pieces == whole, "split at \(split): \(pieces.count) bytes, whole \(whole.count)")
        }
        #expect(whole.count == 393_456)
    }

    /// A valid body whose last read ends as a piece fills: complete, every byte out. Zeros
    /// compress about a thousand to one, so one read of the whole body fills many pieces.
    @Test(arguments: [Inflater.pieceSize, 6 * Inflater.pieceSize, 6 * Inflater.pieceSize + 240, 1 << 22])
    func aValidBodyIsWholeAndCompleteReadInOneGo(_ size: Int) async throws {
        let original = Data(count: size)
        let (output, complete) = try await inflate([gzip(original)])
        #expect(output.count == size)
        #expect(complete)
    }

    /// The fuzzer's input (a gzip header, a deflate stream of zeros with a few stray bytes, no
    /// end), written as runs: zero bytes as counts, other bytes in hex.
    static let fromFuzzer: Data = {
        let runs: [Any] = ["1f8b08", 1, "d70d076b02ffecc10101", 3, "8090feafee080a", 319, "40", 40, "04", 5, "c93035", 13]
        var data = Data()
        for run in runs {
            if let zeros = run as? Int {
                data += Data(count: zeros)
            } else if let hex = run as? String {
                var index = hex.startIndex
                while index < hex.endIndex {
                    let next = hex.index(index, offsetBy: 2)
                    data.append(UInt8(hex[index..<next], radix: 16) ?? 0)
                    index = next
                }
            }
        }
        return data
    }()

    @Test func aBodyCutAfterTheFirstMagicByteOfAnotherMemberIsNotComplete() async throws {
        let body = gzip(Data("one".utf8)) + Data([0x1f])
        let (output, complete) = try await inflate([body])
        #expect(output == Data("one".utf8))
        #expect(!complete)
    }

    @Test(arguments: [[0x1f, 0x00] as [UInt8], [0x00], [0x1f, 0x8b, 0x00, 0x00]])
    func anythingButAMemberAfterTheEndIsCorrupt(_ trailing: [UInt8]) async throws {
        let body = gzip(Data("one".utf8)) + Data(trailing)
        await #expect(throws: (any Error).self) { _ = try await inflate([body]) }
    }

    /// `data` as one gzip member, made by zlib.
    func gzip(_ data: Data) -> Data {
        var stream = z_stream()
        guard deflateInit2_(&stream, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else { return Data() }
        defer { deflateEnd(&stream) }
        var input = [UInt8](data)
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(input.count))) + 64)
        input.withUnsafeMutableBufferPointer { inputBytes in
            output.withUnsafeMutableBufferPointer { outputBytes in
                stream.next_in = inputBytes.baseAddress
                stream.avail_in = uInt(inputBytes.count)
                stream.next_out = outputBytes.baseAddress
                stream.avail_out = uInt(outputBytes.count)
                _ = deflate(&stream, Z_FINISH)
            }
        }
        return Data(output.prefix(Int(stream.total_out)))
    }
}
