import Courier
import Foundation
import Testing

@testable import CourierURLSession

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// FoundationNetworking sets a task waiting for the delegate's answer to a redirect before it
/// asks, takes the answer on the task's work queue after the delegate returns, and traps
/// ("Received callback for HTTP redirection, but we're not waiting for it") when a `cancel()`
/// processed there in between has moved the task on. So a cancelled task's redirect question is
/// left unanswered (the cancel completes it), and an answered task is never cancelled (its
/// transfer was complete when it asked; the answer completes it). Socket-free: a task that never
/// runs, and the session's calls queue drained (it is serial) before each look.
@Suite("URLSession transport: a cancel never races a redirect's answer")
struct RedirectAnswerCancelTests {
    /// Waits until everything queued on `calls` before this has run.
    private func drained(_ calls: SessionCalls) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in calls.run { done.resume() } }
    }

    private func transfer(for task: URLSessionTask, calls: SessionCalls) -> SessionDelegate.Transfer {
        let transfer = SessionDelegate.Transfer(
            request: .get |> url("http://127.0.0.1:9/redirect"), uploadFile: nil, bodyPipe: nil, options: .buffered,
            calls: calls, cleanup: {}, head: { _ in })
        transfer.state.withLock { $0.task = task }
        return transfer
    }

    @Test func anAnsweredTaskIsNeverCancelled() async throws {
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let task = session.dataTask(with: try #require(URL(string: "http://127.0.0.1:9/redirect")))
        let calls = SessionCalls()
        let transfer = transfer(for: task, calls: calls)
        #expect(transfer.answersRedirect())
        transfer.cancel()
        await drained(calls)
        #expect(task.state == .suspended, "cancelled after its redirect was answered")
        #expect(transfer.state.withLock { $0.stopped }, "the transfer stops at once: what arrives is dropped")
    }

    @Test func aCancelledTasksRedirectQuestionIsLeftUnanswered() async throws {
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let task = session.dataTask(with: try #require(URL(string: "http://127.0.0.1:9/redirect")))
        let calls = SessionCalls()
        let transfer = transfer(for: task, calls: calls)
        transfer.cancel()
        await drained(calls)
        #expect(task.state != .suspended && task.state != .running, "the cancel was not made")
        #expect(!transfer.answersRedirect(), "answered after a cancel")
    }

    @Test func aTransferStoppedWithoutCancellingItsTaskStillAnswers() async throws {
        // A transfer stopped before it had a task (or whose body pipe ended it) made no cancel:
        // its redirect question is answered, or the task would never complete.
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let calls = SessionCalls()
        let transfer = SessionDelegate.Transfer(
            request: .get |> url("http://127.0.0.1:9/redirect"), uploadFile: nil, bodyPipe: nil, options: .buffered,
            calls: calls, cleanup: {}, head: { _ in })
        transfer.cancel()
        #expect(transfer.answersRedirect())
    }
}
