import CourierCore
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The calls into URLSession that wait for the session's work queue (`cancel`, `resume`, making a
/// task, answering an authentication challenge), made on a queue of their own: never on the
/// delegate queue, whose calls run on libcurl's work queue itself when nothing else is queued (see
/// `DeliveryQueue`: one of them waiting for that queue would never end) and otherwise hold libcurl
/// while they wait, and never on a Swift concurrency thread, which they could block for as long as
/// libcurl reads.
///
/// One per session: a serial queue, which libdispatch backs with a thread of its own while a call
/// waits (a call can wait as long as libcurl's current read burst), so a session whose work queue
/// is busy holds up neither the shared worker threads nor another session's calls.
final class SessionCalls: Sendable {
    private let queue = DispatchQueue(label: "Courier.SessionCalls", qos: .userInitiated)

    /// Runs `call` soon, on this session's calls queue.
    func run(_ call: @escaping @Sendable () -> Void) {
        queue.async(execute: call)
    }

    /// Cancels `task` without waiting for it.
    ///
    /// The cancellation itself waits for the task's queue, which FoundationNetworking places
    /// beside the queue libcurl reads the socket on, under the session's work queue; libdispatch
    /// drains that reading queue while its socket source keeps firing, so under a flood (a sender
    /// faster than libcurl) the cancel lands only when the data pauses (the Known limits article).
    /// Making the call from libcurl's thread instead (a delegate call run in place) would trap:
    /// a sync onto a queue whose target that thread already drains.
    func cancel(_ task: URLSessionTask) {
        queue.async { task.cancel() }
    }
}
