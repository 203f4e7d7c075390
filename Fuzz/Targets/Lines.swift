// fuzz: seeded-runs 200000
@testable import CourierCore
import Foundation

/// Lines (and JSON Lines, which are split by the same splitter) from arbitrary bytes, fed in two
/// chunks split where the first byte says. Rules checked beyond "no crash":
/// - chunk boundaries do not change the lines or the outcome;
/// - no line is longer than the maximum, and none holds a line ending;
/// - the lines and their endings never hold more bytes than the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let input = Data(bytes: bytes, count: count)
    let split = input.isEmpty ? 0 : Int(input[input.startIndex]) % (input.count + 1)
    let whole = lines([input])
    let pieces = lines([input.prefix(split), input.dropFirst(split)])
    require(whole.lines == pieces.lines && whole.failed == pieces.failed, "chunk boundaries changed the lines")
    var total = 0
    for line in whole.lines {
        require(line.count <= maximumLength, "a line over the maximum length")
        require(!line.contains(10) && !line.contains(13), "a line holds a line ending")
        total += line.count
    }
    require(total <= input.count, "more bytes out than in")
    return 0
}

private let maximumLength = 512

private func lines(_ chunks: [Data]) -> (lines: [[UInt8]], failed: Bool) {
    var splitter = LineSplitter(maximumLength: maximumLength, dropsByteOrderMark: true)
    var lines: [[UInt8]] = []
    do {
        for chunk in chunks { try splitter.scanData(Data(chunk)) { lines.append(Array($0)) } }
        splitter.finishBytes { lines.append(Array($0)) }
        return (lines, false)
    } catch is CourierError {
        return (lines, true)
    } catch {
        fail("an error that is not a CourierError: \(error)")
    }
}
