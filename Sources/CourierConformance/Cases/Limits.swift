import CourierCore
import CourierResilience
import CourierTesting
import Foundation

extension ConformanceSuite {
    /// The response size limit, counted after decompression, on every body.
    static let limits: [ConformanceCase] = [
        ConformanceCase("limits: a body over the size limit fails, buffered and streamed, keeping the answer's head") { context in
            let limited = context.executor(ConformanceOptions(maximumResponseSize: 1024))
            let small = try await limited.send(context.httpbin() |> path("bytes", 512))
            try context.expect(small.body.count == 512, "a body within the limit gave \(small.body.count) bytes")
            for target in [context.httpbin() |> path("bytes", 4096), context.httpbin() |> path("stream-bytes", 100_000)] {
                let error = try await context.error { _ = try await limited.send(target) }
                guard case .responseTooLarge(1024) = error.cause else { throw context.failure("send: \(error)") }
                // The answer's head stays on the error (a 200 with a huge body is not a failed
                // call), without its body.
                try context.expect(error.response?.status == 200, "send: the error keeps no status: \(error)")
                try context.expect(error.response?.body.isEmpty == true, "send: the error keeps body bytes")
                let streamed = try await limited.stream(target)
                let streamError = try await context.error { _ = try await streamed.body.collect(upTo: 1 << 20) }
                guard case .responseTooLarge(1024) = streamError.cause else { throw context.failure("stream: \(streamError)") }
                try context.expect(streamError.response?.status == 200, "stream: the error keeps no status: \(streamError)")
            }
        },
        ConformanceCase("limits: the size limit counts bytes after decompression") { context in
            // The hostile server's /gzip is 6,545 bytes on the wire and 16,901 once decompressed,
            // whatever the request's headers (httpbin's /gzip echoes them, so its size depends on
            // what the transport adds).
            let error = try await context.error {
                _ = try await context.executor(ConformanceOptions(maximumResponseSize: 10_000)).send(context.hostile() |> path("gzip"))
            }
            guard case .responseTooLarge(10_000) = error.cause else { throw context.failure("\(error)") }
            let roomy = try await context.executor(ConformanceOptions(maximumResponseSize: 20_000)).send(context.hostile() |> path("gzip"))
            try context.expect(roomy.body.count == 16_901, "the decompressed body is \(roomy.body.count) bytes")
        },
        ConformanceCase("limits: the size limit applies to error bodies") { context in
            // /status/418 answers with a teapot drawing well over 64 bytes.
            let error = try await context.error {
                _ = try await context.executor(ConformanceOptions(maximumResponseSize: 64)).send(context.httpbin() |> path("status", 418))
            }
            guard case .responseTooLarge(64) = error.cause else { throw context.failure("\(error)") }
        },
        ConformanceCase("authentication: a challenged 401 keeps its body under a size limit") { context in
            let response = try await context.executor(ConformanceOptions(maximumResponseSize: 1 << 20)).send(
                context.hostile() |> path("challenge") |> timeout(10))
            try context.expect(response.status == 401, "got \(response.status)")
            try context.expect(!response.body.isEmpty, "the 401's body was dropped")
        },
    ]

    /// A body that is cut, corrupt or compressed arrives whole or fails with a typed error.
    static let integrity: [ConformanceCase] = [
        ConformanceCase("integrity: a body cut short is a transient truncation, buffered and streamed") { context in
            let executor = context.executor()
            let error = try await context.error { _ = try await executor.send(context.hostile() |> path("truncated")) }
            try context.expect(error.transportKind == .truncatedBody, "send: \(error)")
            try context.expect(error.isTransient, "send: a truncation must be transient (retryable)")
            let streamed = try await executor.stream(context.stream() |> path("file") |> query("size", 100_000) |> query("cut", 1000))
            let streamError = try await context.error { _ = try await streamed.body.collect(upTo: 1 << 20) }
            try context.expect(streamError.isTransient, "stream: \(streamError) is not transient")
        },
        ConformanceCase("integrity: a corrupt compressed body is a typed error, a whole one is decoded") { context in
            let executor = context.executor()
            let error = try await context.error { _ = try await executor.send(context.hostile() |> path("gzip-corrupt")) }
            try context.expect(error.transportKind == .badResponse, "\(error)")
            struct Items: Decodable { var items: [Int] }
            let items = try await executor.send(context.hostile() |> path("gzip") |> decode(Items.self))
            try context.expect(items.items.count == 3000, "decoded \(items.items.count) of 3000 items")
        },
        ConformanceCase("integrity: a head that is not a final HTTP answer is a bad response, never a response") { context in
            // Informational heads followed by a body, a 101 nobody asked for, statuses that are not
            // three digits. (A status below 100 makes AsyncHTTPClient trap: the Known limits article;
            // each transport's own tests send those.)
            let executor = context.executor()
            let heads = [
                "status=101&framing=length", "status=101&framing=close", "status=100&framing=length", "status=150&framing=chunked",
                "status=199&framing=close", "status=1000&framing=length", "status=20&framing=length", "status=abc&framing=length",
            ]
            for head in heads {
                let request = .get |> url(context.servers.hostile + "/head?" + head) |> deadline(10)
                let sent = try await context.error { _ = try await executor.send(request) }
                try context.expect(sent.transportKind == .badResponse, "send, \(head): \(sent)")
                let streamed = try await context.error { _ = try await executor.stream(request).body.collect(upTo: 1 << 20) }
                try context.expect(streamed.transportKind == .badResponse, "stream, \(head): \(streamed)")
            }
        },
    ]
}
