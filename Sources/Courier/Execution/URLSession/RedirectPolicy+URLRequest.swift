import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension RedirectPolicy {
    /// A redirect step for URLSession: the next hop rendered as the `URLRequest` to send.
    enum Hop: Equatable {
        /// Send this request next.
        case follow(URLRequest)
        /// Return the redirect response itself.
        case deliver
        /// Fail with this transport failure.
        case fail(TransportFailure)
    }

    /// Takes the redirect step (``next(status:location:chain:)``) and renders the request it
    /// follows with, without its ``Request/bodySource`` (the session re-sends a file itself).
    func hop(status: Int, location: String?, chain: inout Chain) -> Hop {
        switch next(status: status, location: location, chain: &chain) {
        case .follow(let request):
            do {
                return .follow(try request.urlRequest(attachingBodySource: false))
            } catch {
                return .fail(TransportFailure(.redirectFailed, message: "the redirect's target could not be sent: \(error.summary)"))
            }
        case .deliver: return .deliver
        case .fail(let failure): return .fail(failure)
        }
    }
}
