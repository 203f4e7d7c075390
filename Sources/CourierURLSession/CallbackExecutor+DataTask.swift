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
            let task = session.dataTask(with: urlRequest) { data, response, error in
                complete(URLSessionExecutor.result(data: data, response: response, error: error).mapError { error in
                    URLSessionErrors.courierError(for: error, request: request)
                })
            }
            task.resume()
            return { task.cancel() }
        }
    }
}
