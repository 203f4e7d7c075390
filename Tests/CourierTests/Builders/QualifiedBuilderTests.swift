import Courier
import Foundation
import Testing

/// A property named like a builder (`deadline`, `timeout`, `path`, `header`) hides the builder
/// inside its type; the builder is still reached by its module's name, as the builders' docs say.
@Suite("Builders: reached by their module's name when a property hides them")
struct QualifiedBuilderTests {
    /// A user's type whose properties are named like builders.
    private struct Delivery {
        let deadline: TimeInterval
        let timeout: TimeInterval
        let path: String

        /// `deadline(deadline)` alone would name the property here: the module's name picks the builder.
        func request() -> Request {
            .post |> url("https://hooks.test") |> Courier.path(path) |> Courier.deadline(deadline) |> CourierCore.timeout(timeout)
        }
    }

    @Test func aQualifiedBuilderCompilesAndDoesWhatTheBareOneDoes() throws {
        let built = Delivery(deadline: 20, timeout: 5, path: "events").request()
        let bare = Request.post |> url("https://hooks.test") |> path("events") |> deadline(20) |> timeout(5)
        #expect(built.deadline == 20 && built.timeout == 5)
        #expect(try built.validatedURL() == bare.validatedURL())
        #expect(built.deadline == bare.deadline && built.timeout == bare.timeout)
    }
}
