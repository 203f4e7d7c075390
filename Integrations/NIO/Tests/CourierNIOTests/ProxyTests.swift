import Courier
import CourierConformance
import CourierNIO
import Foundation
import Testing

/// Hops through real proxies `scripts/test` starts on loopback: tinyproxy (HTTP: `CONNECT` for
/// https, the absolute URL for http; one instance asks for Basic credentials) and microsocks
/// (SOCKS5). Settings read from the environment as curl reads them; a proxy that refuses is a
/// typed error that shows no credential.
@Suite("NIOExecutor: proxies", .serialized, .timeLimit(.minutes(2)))
struct ProxyTests {
    struct MissingProxy: Error, CustomStringConvertible {
        var name: String
        var description: String {
            "\(name) is not set: run the tests with scripts/test, which starts tinyproxy and microsocks (Debian packages)"
        }
    }

    static func proxy(_ variable: String) throws -> NIOTransport.Proxy {
        guard let address = ProcessInfo.processInfo.environment[variable] else { throw MissingProxy(name: variable) }
        return try NIOTransport.Proxy(url: address)
    }

    static func authority() throws -> TLSOptions.Certificate {
        let directory = try #require(ProcessInfo.processInfo.environment["COURIER_TLS_DIR"])
        return try TLSOptions.Certificate(contentsOf: URL(fileURLWithPath: directory + "/ca.pem"))
    }

    /// Runs `body` with an executor whose every hop goes through `proxies`.
    static func through<T>(_ proxies: NIOTransport.Proxies, _ body: (NIOExecutor) async throws -> T) async throws -> T {
        let configuration = NIOTransport.Configuration(tls: TLSOptions(trust: .only([try authority()])), proxies: proxies)
        let executor = try NIOExecutor(configuration: configuration)
        do {
            let result = try await body(executor)
            await executor.transport.shutdown()
            return result
        } catch {
            await executor.transport.shutdown()
            throw error
        }
    }

    struct Echo: Decodable {
        var headers: [String: String]
    }

    @Test func anHTTPProxyForwardsHTTPAndTunnelsHTTPS() async throws {
        let proxy = try Self.proxy("COURIER_HTTP_PROXY_URL")
        let servers = try ConformanceServers.fromEnvironment()
        let secure = try ConformanceServers.httpsFromEnvironment()
        try await Self.through(NIOTransport.Proxies(http: proxy, https: proxy)) { executor in
            // http: the request went to the proxy, which says so in a header it adds.
            let plain = try await executor.send(.get |> url(servers.httpbin + "/headers") |> decode(Echo.self))
            #expect(plain.headers["X-Courier-Proxy"] == "tinyproxy", "\(plain.headers)")
            // https: through a CONNECT tunnel, end to end (HTTP/2 by ALPN inside it); the proxy sees nothing.
            let tunnelled = try await executor.send(.get |> url(secure.httpbin + "/headers") |> decode(Echo.self))
            #expect(tunnelled.headers["X-Courier-Proxy"] == nil)
            let posted = try await executor.send(.post |> url(secure.httpbin + "/post") |> json(["a": 1]))
            #expect(posted.status == 200)
        }
    }

    /// A user's path: a password with `@` (escaped `%40`) and a literal `%41` (escaped `%2541`),
    /// as `HTTPS_PROXY` must spell them. Decoded once: decoding twice sent `A` for `%41`.
    @Test func escapedCredentialsAreDecodedExactlyOnce() throws {
        let proxy = try NIOTransport.Proxy(url: "http://team%40corp:p%2541ss%40word@proxy.internal:3128")
        #expect(proxy.credentials == NIOTransport.Proxy.Credentials(user: "team@corp", password: "p%41ss@word"))
        #expect(proxy.host == "proxy.internal" && proxy.port == 3128)
    }

    @Test func aProxyThatAsksForCredentialsGetsThemAndNeverShowsThem() async throws {
        let address = try #require(ProcessInfo.processInfo.environment["COURIER_HTTP_PROXY_AUTH_URL"], "run scripts/test")
        let servers = try ConformanceServers.fromEnvironment()
        let secure = try ConformanceServers.httpsFromEnvironment()
        let anonymous = try NIOTransport.Proxy(url: address)
        try await Self.through(NIOTransport.Proxies(http: anonymous, https: anonymous)) { executor in
            let refused = await #expect(throws: CourierError.self) { _ = try await executor.send(.get |> url(secure.httpbin + "/get")) }
            guard case .transport(let failure)? = refused?.cause else { throw try #require(refused) }
            #expect(failure.message.contains("407"), "\(failure)")
            #expect(refused?.isTransient == false)
            // Forwarded http: the proxy's 407 is the answer.
            let forwarded = try await executor.send(.get |> url(servers.httpbin + "/get"))
            #expect(forwarded.status == 407)
        }
        let withCredentials = address.replacingOccurrences(of: "http://", with: "http://courier:pr0xy-s3cret@")
        let proxy = try NIOTransport.Proxy(url: withCredentials)
        for printed in ["\(proxy)", String(reflecting: proxy), "\(NIOTransport.Proxies(https: proxy))"] {
            #expect(!printed.contains("pr0xy-s3cret"), "\(printed)")
        }
        var dumped = ""
        dump(proxy, to: &dumped)
        #expect(!dumped.contains("pr0xy-s3cret"))
        try await Self.through(NIOTransport.Proxies(http: proxy, https: proxy)) { executor in
            #expect(try await executor.send(.get |> url(secure.httpbin + "/get")).status == 200)
            let plain = try await executor.send(.get |> url(servers.httpbin + "/headers") |> decode(Echo.self))
            // The proxy took the credentials off before forwarding.
            #expect(plain.headers["Proxy-Authorization"] == nil)
        }
    }

    @Test func aSOCKS5ProxyCarriesHTTPAndHTTPS() async throws {
        let proxy = try Self.proxy("COURIER_SOCKS_PROXY_URL")
        #expect(proxy.kind == .socks5)
        let servers = try ConformanceServers.fromEnvironment()
        let secure = try ConformanceServers.httpsFromEnvironment()
        try await Self.through(NIOTransport.Proxies(http: proxy, https: proxy)) { executor in
            #expect(try await executor.send(.get |> url(servers.httpbin + "/get")).status == 200)
            // By name: the proxy resolves localhost.
            #expect(try await executor.send(.get |> url(secure.otherOrigin + "/get")).status == 200)
            let posted = try await executor.send(.post |> url(servers.httpbin + "/post") |> json(["a": 1]))
            #expect(posted.status == 200)
        }
    }

    /// An `https://` proxy (stunnel in front of tinyproxy): TLS to the proxy, then the request
    /// forwarded inside it, or the origin's own TLS inside its tunnel.
    @Test func anHTTPSProxyCarriesHTTPAndHTTPS() async throws {
        let proxy = try Self.proxy("COURIER_HTTPS_PROXY_URL")
        #expect(proxy.kind == .https)
        let servers = try ConformanceServers.fromEnvironment()
        let secure = try ConformanceServers.httpsFromEnvironment()
        try await Self.through(NIOTransport.Proxies(http: proxy, https: proxy)) { executor in
            let plain = try await executor.send(.get |> url(servers.httpbin + "/headers") |> decode(Echo.self))
            #expect(plain.headers["X-Courier-Proxy"] == "tinyproxy", "\(plain.headers)")
            let tunnelled = try await executor.send(.get |> url(secure.httpbin + "/headers") |> decode(Echo.self))
            #expect(tunnelled.headers["X-Courier-Proxy"] == nil)
            let posted = try await executor.send(.post |> url(secure.httpbin + "/post") |> json(["a": 1]))
            #expect(posted.status == 200)
        }
        // A proxy whose certificate the transport does not trust: a TLS failure, said as the proxy's.
        let untrusting = try NIOExecutor(configuration: NIOTransport.Configuration(proxies: NIOTransport.Proxies(https: proxy)))
        let error = await #expect(throws: CourierError.self) { _ = try await untrusting.send(.get |> url(secure.httpbin + "/get")) }
        await untrusting.transport.shutdown()
        guard case .transport(let failure)? = error?.cause else { throw try #require(error) }
        #expect(failure.kind == .secureConnectionFailed, "\(failure)")
        #expect(failure.message.hasPrefix("the proxy's TLS: "), "\(failure.message)")
        #expect(failure.tlsProblem != nil)
    }

    @Test func aSOCKS5ProxyWithAUserAndPasswordGetsThemAndNeverShowsThem() async throws {
        let proxy = try Self.proxy("COURIER_SOCKS_PROXY_AUTH_URL")
        #expect(proxy.credentials?.user == "courier")
        for printed in ["\(proxy)", String(reflecting: proxy)] { #expect(!printed.contains("s0cks-s3cret"), "\(printed)") }
        let servers = try ConformanceServers.fromEnvironment()
        let secure = try ConformanceServers.httpsFromEnvironment()
        try await Self.through(NIOTransport.Proxies(http: proxy, https: proxy)) { (executor: NIOExecutor) async throws in
            #expect(try await executor.send(.get |> url(servers.httpbin + "/get")).status == 200)
            #expect(try await executor.send(.get |> url(secure.otherOrigin + "/get")).status == 200)
        }
        var anonymous = proxy
        anonymous.credentials = nil
        var wrong = proxy
        wrong.credentials = .init(user: "courier", password: "not-the-s3cret")
        for (candidate, words) in [(anonymous, "requires authentication"), (wrong, "refused the user and password")] {
            try await Self.through(NIOTransport.Proxies(http: candidate, https: candidate)) { executor in
                let error = await #expect(throws: CourierError.self) { _ = try await executor.send(.get |> url(servers.httpbin + "/get")) }
                guard case .transport(let failure)? = error?.cause else { throw try #require(error) }
                #expect(failure.message.contains(words), "\(failure.message)")
                #expect(!"\(String(describing: error))".contains("s3cret"))
            }
        }
    }

    @Test func aProxyThatCannotReachTheServerIsATypedTransientFailure() async throws {
        // A port nothing listens on (taken and released here).
        let closed = "http://127.0.0.1:9"
        for variable in ["COURIER_HTTP_PROXY_URL", "COURIER_SOCKS_PROXY_URL"] {
            let proxy = try Self.proxy(variable)
            try await Self.through(NIOTransport.Proxies(http: proxy, https: proxy)) { executor in
                let request = Request.get |> url(closed.replacingOccurrences(of: "http:", with: "https:") + "/get")
                let error = await #expect(throws: CourierError.self) { _ = try await executor.send(request) }
                guard case .transport(let failure)? = error?.cause else { throw try #require(error) }
                #expect(failure.kind == .cannotConnect, "\(variable): \(failure.message)")
                #expect(error?.isTransient == true)
            }
        }
        // And a proxy that is not there at all.
        try await Self.through(NIOTransport.Proxies(https: .http(host: "127.0.0.1", port: 9))) { executor in
            let error = await #expect(throws: CourierError.self) {
                _ = try await executor.send(.get |> url(try ConformanceServers.httpsFromEnvironment().httpbin + "/get"))
            }
            guard case .transport(let failure)? = error?.cause else { throw try #require(error) }
            #expect(failure.kind == .cannotConnect)
        }
    }

    /// Settings from the environment, as curl reads them; a value that cannot be used is an error
    /// naming the variable, never the value (it may hold a password), and never dropped.
    @Test func settingsAreReadFromTheEnvironmentAsCurlReadsThem() throws {
        let read = try NIOTransport.Proxies.fromEnvironment([
            "https_proxy": "http://user:pw@proxy.test:3128", "HTTP_PROXY": "http://ignored.test:1", "http_proxy": "socks5h://socks.test",
            "NO_PROXY": "internal.test, .corp.test,10.0.0.1,localhost:8080",
        ])
        #expect(read.https == .http(host: "proxy.test", port: 3128, credentials: .init(user: "user", password: "pw")))
        #expect(read.http == .socks5(host: "socks.test", port: 1080))
        #expect(read.bypass == ["internal.test", ".corp.test", "10.0.0.1", "localhost:8080"])
        #expect(try NIOTransport.Proxies.fromEnvironment(["ALL_PROXY": "proxy.test:8080"]).http == .http(host: "proxy.test", port: 8080))
        #expect(try NIOTransport.Proxies.fromEnvironment([:]) == .none)
        let https = try NIOTransport.Proxy(url: "https://proxy.test")
        #expect(https == .https(host: "proxy.test", port: 443))
        let socks = try NIOTransport.Proxy(url: "socks5://u:p@proxy.test")
        #expect(socks == .socks5(host: "proxy.test", port: 1080, credentials: .init(user: "u", password: "p")))
        for bad in ["ftp://proxy.test", "http://:80", "http://proxy.test:99999", "socks5://u:\(String(repeating: "p", count: 256))@proxy.test"] {
            let error = #expect(throws: NIOTransport.Proxy.Invalid.self) { try NIOTransport.Proxies.fromEnvironment(["HTTPS_PROXY": bad]) }
            #expect(error?.reason.hasPrefix("HTTPS_PROXY") == true)
        }
        let secret = #expect(throws: NIOTransport.Proxy.Invalid.self) {
            try NIOTransport.Proxies.fromEnvironment(["HTTPS_PROXY": "gopher://user:hunter2@proxy.test"])
        }
        #expect(secret?.description.contains("hunter2") == false)
    }

    /// `NO_PROXY` sends the hosts it names (and their subdomains, and `*` all) directly.
    @Test func bypassedHostsGoDirectly() async throws {
        let servers = try ConformanceServers.fromEnvironment()
        let nowhere = NIOTransport.Proxy.http(host: "127.0.0.1", port: 9)
        try await Self.through(NIOTransport.Proxies(http: nowhere, bypass: ["127.0.0.1"])) { executor in
            let status = try await executor.send(.get |> url(servers.httpbin + "/get")).status
            #expect(status == 200)
        }
        try await Self.through(NIOTransport.Proxies(http: nowhere, bypass: ["*"])) { executor in
            let status = try await executor.send(.get |> url(servers.otherOrigin + "/get")).status
            #expect(status == 200)
        }
        try await Self.through(NIOTransport.Proxies(http: nowhere, bypass: [".other.test"])) { executor in
            let error = await #expect(throws: CourierError.self) { _ = try await executor.send(.get |> url(servers.httpbin + "/get")) }
            #expect(error != nil)
        }
    }
}
