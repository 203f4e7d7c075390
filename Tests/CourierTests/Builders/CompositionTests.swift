import Courier
import Foundation
import Testing

@Suite("Composition")
struct CompositionTests {
    @Test func composeRunsLeftThenRight() {
        let first: RequestBuilder = header("X-Order", "first")
        let second: RequestBuilder = header("X-Order", "second")
        #expect((Request.get |> (first <> second)).headers["X-Order"] == "second")
        #expect((Request.get |> (second <> first)).headers["X-Order"] == "first")
    }

    @Test func namedFormsMatchOperators() {
        let api: RequestBuilder = baseURL("https://api.test/v1") <> accept(.json)
        let viaOperators = Request.get |> api |> path("users") |> query("page", 2)
        let viaNames = Request.get.applying(chain(baseURL("https://api.test/v1"), accept(.json)), path("users"), query("page", 2))
        var mutated = Request.get
        mutated.apply(api, path("users"), query("page", 2))
        #expect(viaOperators == viaNames)
        #expect(viaOperators == mutated)
    }

    @Test func plainFunctionsConvertToBuilders() {
        @Sendable func stamp(_ request: Request) -> Request {
            var request = request
            request.headers.set("X-Stamp", "1")
            return request
        }
        #expect((Request.get |> stamp).headers["X-Stamp"] == "1")
    }

    @Test func operatorPrecedenceBindsBelowArithmetic() {
        let page = 1
        let request = Request.get |> baseURL("https://api.test") |> query("page", page + 1)
        #expect(request.queryItems == [QueryItem(name: "page", value: "2")])
    }

    @Test func customBuildersCanRecordProblems() {
        let requireHTTPS: RequestBuilder = { request in
            var request = request
            if request.baseURL?.scheme != "https" {
                request.record(RequestProblem(.custom("insecure"), "plain http is not allowed"))
            }
            return request
        }
        #expect((Request.get |> baseURL("http://api.test") |> requireHTTPS).problemKinds == [.custom("insecure")])
    }

    @Test func thirtyStepChainBuildsTheExpectedRequest() {
        let request = Request.get |> baseURL("https://api.test") |> path("a") |> path("b") |> path("c")
            |> query("q1", 1) |> query("q2", "two") |> query("q3", true) |> query("q4", 4.5) |> query("q5", [1, 2])
            |> header("X-1", "1") |> header("X-2", "2") |> header("X-3", "3") |> header("X-4", "4")
            |> accept(.json) |> userAgent("t") |> bearer("tok") |> timeout(10) |> cachePolicy(.useProtocolCachePolicy)
            |> method(.post) |> json(["k": "v"]) |> addingHeader("X-5", "5") |> addingHeader("X-5", "6")
            |> removingHeader("X-4") |> query("q6", "six") |> path("d") |> header("X-7", "7") |> contentType(.json)
            |> apiKey("key") |> query("q7", 7) |> header("X-8", "8")
        #expect(request.problems.isEmpty)
        #expect(request.renderedURL == "https://api.test/a/b/c/d?q1=1&q2=two&q3=true&q4=4.5&q5=1&q5=2&q6=six&q7=7")
        #expect(request.headers.count == 12)
    }

    /// A builder after `decode` applies to the resource's request, as if it came first.
    @Test func buildersApplyToAResourcesRequest() throws {
        let resource = Request.get |> baseURL(api) |> path("users") |> decode([User].self) |> header("X-Trace", "t1")
            |> query("page", 2)
        #expect(resource.request.headers["X-Trace"] == "t1")
        #expect(resource.request.url?.absoluteString == "\(api)/users?page=2")
        let value = try resource.decode(Response(status: 200, body: Data("[]".utf8)))
        #expect(value.isEmpty)
    }

    @Test func urlPropertyIsNilForAnInvalidRequest() {
        #expect((Request.get |> baseURL(api) |> path("..")).url == nil)
        #expect((Request.get |> baseURL(api)).url?.absoluteString == api)
    }
}
