import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Raw URLSession driven through a data delegate, as Courier's executor must be (redirect
/// control, the Linux 401 fix and the size limit all need the delegate), without anything else
/// of Courier. Separates the cost of the delegate mechanism from Courier's own.
///
/// `@unchecked Sendable` is sound: `pending` is only touched while `lock` is held.
final class DelegateClient: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var pending: [Int: (data: Data, continuation: CheckedContinuation<(Data, URLResponse?), any Error>)] = [:]
    private(set) var session: URLSession!

    init(configuration: URLSessionConfiguration) {
        super.init()
        session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
    }

    func data(for request: URLRequest) async throws -> (Data, URLResponse?) {
        try await withCheckedThrowingContinuation { continuation in
            let task = session.dataTask(with: request)
            lock.lock()
            pending[task.taskIdentifier] = (Data(), continuation)
            lock.unlock()
            task.resume()
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        lock.lock()
        pending[dataTask.taskIdentifier]?.data.append(data)
        lock.unlock()
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        lock.lock()
        let entry = pending.removeValue(forKey: task.taskIdentifier)
        lock.unlock()
        guard let entry else { return }
        if let error {
            entry.continuation.resume(throwing: error)
        } else {
            entry.continuation.resume(returning: (entry.data, task.response))
        }
    }
}
