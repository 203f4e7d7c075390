// What the integrations' snippets assume beside Prelude.swift (scripts/check-snippets
// --integrations): swift-log's logger, a private authority and public-key pins. Type-checked,
// never run (so the `try!` below never executes).
import Courier
import Foundation
import Logging
import Metrics
import Tracing

let logger = Logger(label: "snippets")
let companyCA = try! TLSOptions.Certificate(contentsOf: companyCAFile)
let livePin = try! TLSOptions.PublicKeyPin(base64: "Dt6xRJZ2H6ByVmbk4nJxOsnzsLq8MJSrpbmd7mRH79Y=")
let backupPin = try! TLSOptions.PublicKeyPin(base64: "jXnLSkBnPhK9vtoBk8wb1Em4kwObs6G6R2ZC7C6Ml3M=")

/// The metrics backend a reader bootstraps (Prometheus, StatsD, OpenTelemetry).
let myFactory: any MetricsFactory = NOOPMetricsHandler.instance

/// The tracer a reader bootstraps (swift-otel, say).
let myTracer = NoOpTracer()
