// The logger Courier's own snippets log to (scripts/check-snippets, beside Prelude.swift): the
// integrations' snippets use swift-log's `Logger` instead (PreludeIntegrations.swift).

struct Logger: Sendable {
    func debug(_ message: String) {}
    func notice(_ message: String) {}
}

let logger = Logger()
