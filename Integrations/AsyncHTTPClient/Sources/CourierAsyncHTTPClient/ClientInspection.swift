import AsyncHTTPClient

/// Reads what a borrowed `HTTPClient` will do on its own. AsyncHTTPClient keeps the client's
/// configuration internal, so it is read by reflection; a future layout that reflection cannot
/// read passes here, and the executor still refuses a redirect the client followed by itself.
enum ClientInspection {
    static func problems(of client: HTTPClient) -> [String] {
        var problems: [String] = []
        if let configuration = Mirror(reflecting: client).descendant("configuration") as? HTTPClient.Configuration {
            if let mode = Mirror(reflecting: configuration.redirectConfiguration).descendant("mode"),
                String(describing: mode).hasPrefix("follow")
            {
                problems.append("follows redirects")
            }
            if case .enabled = configuration.decompression { problems.append("decompresses bodies") }
        }
        if let tracer = client.tracer, String(describing: type(of: tracer)) != "NoOpTracer" { problems.append("traces requests") }
        return problems
    }
}
