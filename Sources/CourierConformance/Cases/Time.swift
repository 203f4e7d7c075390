import CourierCore
import CourierResilience
import CourierTesting
import Foundation

extension ConformanceSuite {
    /// Deadlines and timeouts, on every kind of body.
    static let time: [ConformanceCase] = [
        ConformanceCase("time: a deadline ends a slow response", needs: [.timing]) { context in
            // The outcome decides, not a stopwatch: without a working deadline the answer
            // arrives after 8 s as a 200, however fast or busy the machine.
            let error = try await context.error {
                _ = try await context.executor().send(context.httpbin() |> path("delay", 8) |> deadline(1))
            }
            try context.expect(error.isTimeout, "got \(error)")
        },
        ConformanceCase("time: a deadline ends a streamed body that keeps arriving", needs: [.timing]) { context in
            let response = try await context.executor().stream(
                context.httpbin() |> path("drip") |> query("numbytes", 10) |> query("duration", 10) |> query("delay", 0) |> deadline(1))
            let error = try await context.error { _ = try await response.body.collect(upTo: 100) }
            try context.expect(error.isTimeout, "got \(error)")
        },
        ConformanceCase("time: a deadline ends a drip that never trips the idle timeout") { context in
            // A byte a second under a 3 s idle timeout: only the 1.5 s deadline can end it (the
            // drip would otherwise arrive whole after 8 s).
            let error = try await context.error {
                _ = try await context.executor().send(
                    context.httpbin() |> path("drip") |> query("duration", 8) |> query("numbytes", 8) |> query("delay", 0) |> timeout(3)
                        |> deadline(1.5))
            }
            try context.expect(error.isTimeout, "got \(error)")
        },
        ConformanceCase("time: a sub-second timeout is exact, buffered and streamed") { context in
            let executor = context.executor()
            let quick = try await context.withoutServerSilence(
                "a 50 ms answer under a 0.5 s timeout", context.httpbin() |> path("delay", "0.05") |> timeout(0.5)
            ) { try await executor.send($0) }
            try context.expect(quick.status == 200, "a 50 ms answer under a 0.5 s timeout gave \(quick.status)")
            // An answer after 0.9 s under a 0.3 s timeout: a timeout rounded up to a whole second
            // would let it through, an exact one ends the call first. The outcome tells them
            // apart, not a stopwatch (a loaded server only answers later).
            for streamed in [false, true] {
                let slow = context.httpbin() |> path("delay", "0.9") |> timeout(0.3)
                let error = try await context.error {
                    if streamed { _ = try await executor.stream(slow).body.collect(upTo: 1 << 20) } else { _ = try await executor.send(slow) }
                }
                try context.expect(error.isTimeout, "streamed \(streamed): got \(error)")
            }
        },
        ConformanceCase("time: a sub-second timeout counts time without data, buffered and streamed") { context in
            let executor = context.executor()
            // Six bytes over 1.2 s, one every 0.2 s: a 0.7 s idle timeout never fires, one that
            // counted the whole call would fire every time. A timeout is judged by when the
            // server wrote, not by this clock: hypercorn once queued the drip behind requests
            // abandoned by earlier cases, and its head came too late three times in a row.
            let drip = context.httpbin() |> path("drip") |> query("duration", "1.2") |> query("numbytes", 6) |> query("delay", 0) |> timeout(0.7)
            let buffered = try await context.withoutServerSilence("send", drip) { try await executor.send($0).body.count }
            try context.expect(buffered == 6, "send gave \(buffered) of 6 bytes")
            let streamed = try await context.withoutServerSilence("stream", drip) { try await executor.stream($0).body.collect(upTo: 100).count }
            try context.expect(streamed == 6, "stream gave \(streamed) of 6 bytes")
        },
        ConformanceCase("time: huge timeouts and deadlines do not trap") { context in
            let executor = context.executor()
            for seconds in [9.3e15, 1e20, Double.greatestFiniteMagnitude] {
                let response = try await executor.send(context.httpbin() |> path("get") |> timeout(seconds) |> deadline(seconds))
                try context.expect(response.status == 200, "\(seconds) s: \(response.status)")
            }
        },
    ]

    /// Cancelling the calling or reading task stops the transfer at once.
    static let cancellation: [ConformanceCase] = [
        ConformanceCase("cancellation: cancelling the task ends a request in flight", needs: [.timing]) { context in
            // The server holds the head until the case opens its gate (or 60 s pass): the call
            // must end while the gate is still held. A question of order, not of speed.
            let executor = context.executor()
            let gate = ServerGate(httpbin: context.servers.httpbin, executor: context.executor())
            let task = Task { try await executor.send(gate.request()) }
            try await gate.waitUntilHeld()
            task.cancel()
            let error = try await context.error { _ = try await task.value }
            try context.expect(error.isCancellation, "got \(error)")
            let state = try await gate.open()
            try context.expect(state == .held, "the call ended only once the server answered (its gate was \(state.rawValue))")
        },
        ConformanceCase("cancellation: cancelling the reading task stops a stream at once", needs: [.timing]) { context in
            // The head and 100 bytes, then the server holds the rest until the case opens its
            // gate: the reader must end while the gate is still held.
            let gate = ServerGate(httpbin: context.servers.httpbin, executor: context.executor())
            let response = try await context.executor().stream(gate.request(head: 100))
            let reader = Task { try await response.body.collect(upTo: 1000) }
            try await gate.waitUntilHeld()
            reader.cancel()
            let error = try await context.error { _ = try await reader.value }
            try context.expect(error.isCancellation, "got \(error)")
            let state = try await gate.open()
            try context.expect(state == .held, "the reader ended only once the body did (the server's gate was \(state.rawValue))")
        },
        ConformanceCase("cancellation: a stream a parser stops reaches the server as a disconnect") { context in
            // An event stream that never ends a line, at a pace the client keeps up with: the
            // line bound stops the reader after 1 MiB, and the server must see the connection go
            // long before it has written its 256 MiB. (A sender faster than FoundationNetworking
            // reads is the Known limits article: the stop lands when the flood pauses.)
            let executor = context.executor()
            let key = UUID().uuidString
            let total = 256 << 20
            let response = try await executor.stream(
                context.stream() |> path("bytes") |> query("size", total) |> query("block", 65_536) |> query("pace", 1) |> query("key", key))
            let error = try await context.error { for try await _ in response.body.serverSentEvents {} }
            guard case .decodingFailed = error.cause else { throw context.failure("the line bound ended the stream with \(error)") }
            // The server records how much it wrote once the connection is gone (or once it wrote
            // everything): wait for that, however long it takes, then compare.
            struct Sent: Decodable { var sent: Int; var done: Bool }
            var sent = Sent(sent: 0, done: false)
            while !sent.done {
                try await Task.sleep(for: .milliseconds(50))
                sent = try await executor.send(context.stream() |> path("sent") |> query("key", key) |> decode(Sent.self))
            }
            try context.expect(sent.sent < 64 << 20, "the server wrote \(sent.sent >> 20) of \(total >> 20) MiB after a stop at 1 MiB")
        },
        ConformanceCase("cancellation: a call cancelled before its head keeps nothing it was given") { context in
            // Found by the soak (URLSession): the transfer's stop action held the transfer, which
            // held the stop action, so every call cancelled before its head kept its transfer,
            // its chunks and what the caller handed it. What the caller handed it is what can be
            // watched from outside: a progress object no one else holds.
            let executor = context.executor()
            let file = temporaryFile()
            defer { cleanUp(file) }
            try Data(repeating: 0x4C, count: 100_000).write(to: file)
            struct Uploaded: Decodable { var complete: Bool }
            for attempt in 0..<3 {
                let key = "lifetime-\(UUID().uuidString)-\(attempt)"
                weak var watched: TransferProgress?
                let call: Task<StreamedResponse, any Error>
                do {
                    let progress = TransferProgress()
                    watched = progress
                    // The server reads the whole body, then waits 10 s before its head.
                    let request = context.stream(.post) |> path("upload") |> query("key", key) |> query("delay", 10) |> upload(file)
                    call = Task { try await executor.stream(request, options: StreamOptions(uploadProgress: progress)) }
                }
                // Progress, not a guess: the server has the whole body and is holding the head.
                // (`null` until the request's head has reached it: on a busy machine the first
                // looks come before that.)
                var uploaded: Uploaded?
                while uploaded?.complete != true {
                    try await Task.sleep(for: .milliseconds(20))
                    uploaded = try await executor.send(context.stream() |> path("uploaded") |> query("key", key) |> decode(Uploaded?.self))
                }
                call.cancel()
                let error = try await context.error { _ = try await call.value }
                try context.expect(error.isCancellation, "got \(error)")
                // A transport may let go a moment after the call returns (its task ends on a
                // queue of its own): wait for that. The 120 s bound only keeps a leak from
                // hanging the run; a release takes milliseconds, however busy the machine.
                let clock = ContinuousClock()
                let start = clock.now
                while watched != nil, clock.now - start < .seconds(120) {
                    try await Task.sleep(for: .milliseconds(20))
                }
                try context.expect(watched == nil, "call \(attempt + 1): the upload's progress object was still held 120 s after the call was cancelled")
            }
        },
    ]
}
