// fuzz: seeded-runs 150000
@testable import CourierCore
import Foundation

/// Server-sent events from arbitrary bytes, fed in two chunks split where the first byte says.
/// Rules checked beyond "no crash":
/// - chunk boundaries do not change what is parsed: the events (and the error, if any) are the
///   same whole and split;
/// - no event carries more data than the parser's documented maximum;
/// - the only error is Courier's, for a line or an event over its limit.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let input = Data(bytes: bytes, count: count)
    let split = input.isEmpty ? 0 : Int(input[input.startIndex]) % (input.count + 1)
    let whole = parse([input])
    let pieces = parse([input.prefix(split), input.dropFirst(split)])
    require(whole.events == pieces.events, "chunk boundaries changed the events")
    require(whole.failed == pieces.failed, "chunk boundaries changed the outcome")
    for event in whole.events {
        require(event.data.utf8.count <= maximumEventSize, "an event over the maximum size")
    }
    return 0
}

private let maximumEventSize = 4096

private func parse(_ chunks: [Data]) -> (events: [ServerSentEvent], failed: Bool) {
    var parser = ServerSentEventParser(maximumLineLength: 1024, maximumEventSize: maximumEventSize)
    var events: [ServerSentEvent] = []
    do {
        for chunk in chunks { try parser.feed(Data(chunk)) { events.append($0) } }
        parser.finish()
        return (events, false)
    } catch is CourierError {
        return (events, true)
    } catch {
        fail("an error that is not a CourierError: \(error)")
    }
}
