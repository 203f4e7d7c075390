import CCourierZlib
@testable import CourierAsyncHTTPClient
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
