// fuzz: seeded-runs 20000
import CLibFuzzer
import CourierCore
@_spi(Fuzzing) import CourierNIOProbe
import Foundation

/// Any bytes as a server's answer to a request on one of CourierNIO's HTTP/1.1 connections
/// (SwiftNIO's decoder, then Courier's handler). The first byte chooses the request (`HEAD` when
/// its low bit is set) and where the answer is split in two reads; the rest is the answer.
/// Rules: never a trap, only an answer or a typed failure; the same outcome whole, split in two,
/// and (for answers up to 160 bytes) one byte per read; a body never longer than the bytes sent;
/// a connection kept only after a final answer (a status from 200 on).
@main
struct HTTP1Response {
    static func main() {
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv) { bytes, count in
            guard let bytes else { return 0 }
            return fuzz(bytes, count)
        })
    }
}

func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    guard count >= 1 else { return 0 }
    let head = bytes[0] & 1 == 1
    let answer = Array(UnsafeBufferPointer(start: bytes + 1, count: count - 1))
    let split = answer.isEmpty ? 0 : Int(bytes[0] >> 1) * answer.count / 127
    let whole = withinBudget("ResponseProbe") { ResponseProbe.run([answer], head: head) }
    check(whole, sent: answer.count)
    let halves = ResponseProbe.run([Array(answer[..<min(split, answer.count)]), Array(answer[min(split, answer.count)...])], head: head)
    check(halves, sent: answer.count)
    require(halves.result == whole.result, "split at \(split): \(halves.result), whole: \(whole.result)")
    // One byte per read costs a pipeline pass per byte: heads and short answers, where chunk
    // boundaries fall inside the syntax, get it.
    if answer.count <= 160 {
        let dripped = ResponseProbe.run(answer.map { [$0] }, head: head)
        check(dripped, sent: answer.count)
        require(dripped.result == whole.result, "one byte per read: \(dripped.result), whole: \(whole.result)")
    }
    return 0
}

/// The rules every outcome keeps.
func check(_ outcome: ResponseProbe.Outcome, sent: Int) {
    switch outcome.result {
    case .answer(let status, let body):
        require(body.count <= sent, "a body of \(body.count) bytes from \(sent) bytes")
        require((0...999).contains(status), "status \(status)")
        if outcome.reusable { require(status >= 200, "a connection kept after a \(status)") }
    case .failure(let kind, let message):
        require(kind != nil, "an untyped failure: \(message)")
        require(!outcome.reusable, "a connection kept after a failure: \(message)")
    }
}
