import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A call cancelled before URLSession made its task, on a transport that the caller then lets go:
/// the task must not be made on the invalidated session (FoundationNetworking traps there). The
/// exchange's timer and a caller's deadline cancel calls this early, on a busy machine often.
@Suite("Integration: a transport let go while a cancelled call was being launched")
struct TransportLifetimeTests {
    @Test func cancellingAtOnceAndDroppingTheTransportNeverTraps() async throws {
        // Port 9 (discard) on loopback: nothing listens; no request needs an answer here.
        let request = Request.get |> url("http://127.0.0.1:9/never") |> timeout(30)
        for round in 0..<300 {
            let call = Task {
                let executor = URLSessionExecutor(configuration: .ephemeral)
                return try await executor.stream(request).status
            }
            // Cancelled at different points of the launch: before, while and after its task is made.
            for _ in 0..<(round % 8) { await Task.yield() }
            call.cancel()
            let outcome = await call.result
            // Refused or cancelled, whichever came first; never an answer.
            guard case .failure(let error) = outcome else {
                Issue.record("a call to a closed port answered: \(outcome)")
                return
            }
            #expect(error is CourierError)
        }
        // And a streamed upload of unknown length, which has a session of its own.
        let chunks = AsyncThrowingStream<Data, any Error> { continuation in
            continuation.yield(Data("x".utf8))
            continuation.finish()
        }
        let upload = Request.post |> url("http://127.0.0.1:9/never") |> Courier.upload(chunks)
        for round in 0..<100 {
            let call = Task { try await URLSessionExecutor(configuration: .ephemeral).stream(upload).status }
            for _ in 0..<(round % 8) { await Task.yield() }
            call.cancel()
            _ = await call.result
        }
    }
}

/// FoundationNetworking traps when a task is cancelled while its `URLCache` lookup is pending,
/// so on Linux the transport's sessions have no cache (the trap above reproduced in about half of
/// the runs of this suite beside another before that). What a cache policy then means.
@Suite("Integration: URLSession without a URL cache on Linux")
struct URLCacheOnLinuxTests {
    @Test func theTransportLeavesTheCallersConfigurationAlone() {
        let configuration = URLSessionConfiguration.ephemeral
        let cache = configuration.urlCache
        let transport = URLSessionTransport(configuration: configuration)
        #expect(configuration.urlCache === cache)
        #if canImport(FoundationNetworking)
            #expect(cache != nil)
            #expect(transport.session.configuration.urlCache == nil)
        #else
            #expect(transport.session.configuration.urlCache === cache)
        #endif
    }

    #if canImport(FoundationNetworking)
        /// FoundationNetworking never honoured `returnCacheDataDontLoad` (it loads from the origin
        /// even with a cache); with none, every request is loaded, as documented.
        @Test func onLinuxEveryRequestIsLoadedFromTheOrigin() async throws {
            let executor = URLSessionExecutor(configuration: .ephemeral)
            let cacheOnly = try HTTPBin.request() |> path("uuid") |> cachePolicy(.returnCacheDataDontLoad)
            let first = try await executor.send(cacheOnly)
            let second = try await executor.send(cacheOnly)
            #expect(first.status == 200)
            #expect(first.body != second.body)
        }
    #endif
}
