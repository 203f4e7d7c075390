import CourierCore
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension CallbackExecutor {
    /// An executor over `URLSession.dataTask(with:completionHandler:)`.
    /// - Parameter session: The session; `URLSession.shared` by default.
    /// - Returns: The executor.
    public static func dataTask(session: URLSession = .shared) -> CallbackExecutor {
        CallbackExecutor { request, complete in
            let urlRequest: URLRequest
            do {
                urlRequest = try request.urlRequest()
            } catch {
                complete(.failure(error))
                return {}
            }
            let completed = Locked(false)
            let task = session.dataTask(with: urlRequest) { data, response, error in
                completed.withLock { $0 = true }
                complete(URLSessionTransport.result(data: data, response: response, error: error).mapError { error in
                    URLSessionErrors.courierError(for: error, request: request)
                })
            }
            task.resume()
            // Not in place: the cancel is called from a Swift cancellation handler, which holds
            // the calling task's status lock, and `cancel()` waits for the session's work queue,
            // which may be calling the completion above (and so waiting for that lock). And not
            // after completion: FoundationNetworking traps when a cancel races the task's end.
            return {
                DispatchQueue.global().async {
                    if !completed.withLock({ $0 }) { task.cancel() }
                }
            }
        }
    }
}
