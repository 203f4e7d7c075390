// The WebSocket deflater alone (CourierWebSocket's Compression sources, compiled into this
// program by `Benchmarks/Deflate/run`, which runs it): the bytes it writes and its CPU per message
// on a corpus of JSON lines, cut into messages of one size, each compressed on its own or with the
// ones before it as history (the context taken over).
//
//   main CORPUS SIZE MODE     SIZE: bytes a message (0: the whole corpus as one); MODE: alone|takeover
//
// Prints one JSON object: {messages, inputBytes, outputBytes, microsecondsPerMessage (the best of
// seven passes over every message, on the thread's CPU clock)}.
import Foundation

let arguments = CommandLine.arguments
guard arguments.count == 4, let size = Int(arguments[2]), let data = FileManager.default.contents(atPath: arguments[1]) else {
    FileHandle.standardError.write(Data("usage: main CORPUS SIZE alone|takeover\n".utf8))
    exit(2)
}
let corpus = [UInt8](data)
let takeover = arguments[3] == "takeover"
var messages: [[UInt8]] = []
if size == 0 {
    messages = [corpus]
} else {
    var start = 0
    while start + size <= corpus.count, messages.count < 2_000 {
        messages.append(Array(corpus[start..<(start + size)]))
        start += size
    }
}

func cpuNow() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

var outputBytes = 0
var best = Double.infinity
for _ in 0..<7 {
    var written = 0
    let start = cpuNow()
    if takeover {
        var context = Deflater.Context(windowBits: 15)
        for message in messages { written += Deflater.compress(message, context: &context).count }
    } else {
        for message in messages { written += Deflater.compress(message).count }
    }
    best = min(best, cpuNow() - start)
    outputBytes = written
}
let object: [String: Double] = [
    "messages": Double(messages.count), "inputBytes": Double(messages.reduce(0) { $0 + $1.count }),
    "outputBytes": Double(outputBytes), "microsecondsPerMessage": best / Double(messages.count) * 1e6,
]
print(String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self))
