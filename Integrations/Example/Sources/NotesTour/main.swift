import CourierAsyncHTTPClient
import CourierCore
import CourierResilience
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
import Logging
import NotesAPI

// The notes client against a running httpbin, one operation at a time, over AsyncHTTPClient:
//
//   swift run NotesTour http://127.0.0.1:8080
//
// Traffic is logged at .debug to standard error: look for the bearer token (it is not there).

/// Writes a line to standard error (FoundationEssentials has no `FileHandle`).
func printToStandardError(_ line: String) {
    var text = line + "\n"
    text.withUTF8 { bytes in _ = write(STDERR_FILENO, bytes.baseAddress, bytes.count) }
}

guard CommandLine.arguments.count == 2, let server = URL(string: CommandLine.arguments[1]) else {
    printToStandardError("usage: NotesTour URL (an httpbin, for example http://127.0.0.1:8080)")
    exit(2)
}
LoggingSystem.bootstrap(StreamLogHandler.standardError)
var logger = Logger(label: "notes")
logger.logLevel = .debug

let service = NotesService(
    serverURL: server, retry: RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(50)), logger: logger
) { _ in "token-from-your-identity-provider" }

do {
    print("1. whoAmI: the bearer token is added by AuthRefreshMiddleware")
    let identity = try await service.client.whoAmI().ok.body.json
    print("   authenticated: \(identity.authenticated)")

    print("2. createNote: a POST, retried on 5xx only because its operation is opted in")
    let receipt = try await service.client.createNote(
        headers: .init(idempotencyKey: UUID().uuidString), body: .json(.init(title: "Groceries", text: "milk"))
    ).ok.body.json
    print("   the server received \(receipt.method) with title \(receipt.json?.title ?? "none")")

    print("3. health: a 503 is retried (GET is idempotent), then reaches the documented default response")
    switch try await service.client.health(path: .init(code: 503)) {
    case .ok: print("   healthy")
    case .default(let status, _): print("   not healthy: \(status) after 3 attempts (see the resend_count in the log)")
    }
    print("\nTour complete.")
} catch {
    printToStandardError("\nTour failed: \(error)")
    exit(1)
}
