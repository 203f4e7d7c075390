import Courier
import Foundation
import Testing

/// What logs, metrics and traces record about a request: names that never carry a value.
@Suite("Observability API: error types and redacted URLs")
struct ObservabilityAPITests {
    @Test func errorTypesAreFixedNamesWithoutValues() {
        let cases: [(CourierError, String)] = [
            (CourierError(.timedOut), "timedOut"),
            (CourierError(.cancelled), "cancelled"),
            (CourierError(.transport(TransportFailure(.connectionLost, message: "reset by 10.0.0.1"))), "connectionLost"),
            (CourierError(.transport(TransportFailure(.other, message: "s3cr3t"))), "transportFailure"),
            (CourierError(.unacceptableStatus(503, errorBody: nil)), "unacceptableStatus"),
            (CourierError(.authenticationFailed("token t0ken expired")), "authenticationFailed"),
            (CourierError(.responseTooLarge(limit: 10)), "responseTooLarge"),
            (CourierError(.invalidRequest([RequestProblem(.invalidHeaderValue, "X: a\nb")])), "invalidRequest"),
        ]
        for (error, name) in cases { #expect(error.errorType == name) }
    }

    @Test func theRedactedURLHidesUserinfoAndSensitiveQueryValues() {
        let request = Request.get |> url("https://user:pa55@api.test/v1/items") |> query("access_token", "t0ken") |> query("page", 2)
        let shown = request.redactedURLString
        #expect(shown == "https://<redacted>@api.test/v1/items?access_token=<redacted>&page=2")
        #expect(Request.get.redactedURLString == nil)
    }
}
