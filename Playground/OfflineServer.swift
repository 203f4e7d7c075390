import CourierCore
import CourierTesting
import Foundation

/// An in-memory stand-in for the httpbin endpoints the tour uses, so the tour runs offline.
enum OfflineServer {
    static func executor() -> InMemoryExecutor {
        InMemoryExecutor { request in try answer(request) }
    }

    static func answer(_ request: Request) throws -> Stub {
        // The path as sent: a followed link puts it in the base URL rather than the segments.
        let segments = request.path.split(separator: "/").map { String($0) }
        switch segments.first {
        case "anything":
            return .json(echo(request))
        case "headers":
            return .json(["headers": headers(of: request)])
        case "bearer":
            guard let value = request.headers[.authorization], value.hasPrefix("Bearer ") else { return .status(401) }
            return .json(BearerCheck(authenticated: true, token: String(value.dropFirst("Bearer ".count))))
        case "status":
            return .status(Int(segments.dropFirst().first ?? "") ?? 400)
        case "stream":
            // Like httpbin's /stream/N: N JSON lines, here a few milliseconds apart.
            let count = min(100, Int(segments.dropFirst().first ?? "") ?? 0)
            return .ndjson((0..<count).map { StreamLine(id: $0, url: "https://httpbin.example/stream/\(count)") }, every: .milliseconds(5))
        case "bytes":
            // N pseudo-random bytes in 64 KiB chunks, with a Content-Length.
            let count = min(1 << 24, Int(segments.dropFirst().first ?? "") ?? 0)
            let bytes = Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
            let chunks = stride(from: 0, to: count, by: 1 << 16).map { bytes[$0..<min($0 + (1 << 16), count)] }
            return .stream(
                chunks.map { Data($0) }, headers: [.contentType: "application/octet-stream", .contentLength: "\(count)"],
                every: .milliseconds(2))
        case "events":
            // A chat-style server-sent event stream that ends with OpenAI's [DONE] marker.
            let words = ["Streaming ", "arrives ", "word ", "by ", "word."]
            return .serverSentEvents(
                words.enumerated().map { ServerSentEvent(data: #"{"text":"\#($0.element)"}"#, id: "\($0.offset + 1)") }
                    + [ServerSentEvent(data: "[DONE]")], every: .milliseconds(10))
        case "response-headers":
            // Like httpbin: every query parameter becomes a response header and a JSON field.
            let url = try request.validatedURL()
            let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
            var fields: [String: String] = [:]
            var headers = HTTPHeaders()
            for item in items {
                fields[item.name] = item.value ?? ""
                headers.add(HeaderName(rawValue: item.name), item.value ?? "")
            }
            return .json(fields, headers: headers)
        case "cookies":
            // Like httpbin: /cookies echoes the Cookie field; /cookies/set?name=value sets them on
            // a 302 back to /cookies.
            if segments.dropFirst().first == "set" {
                let cookies = request.queryItems.map { "\($0.name)=\($0.value ?? ""); Path=/" }
                var headers: HTTPHeaders = [.location: "/cookies"]
                for cookie in cookies { headers.add(.setCookie, cookie) }
                return .status(302, headers: headers)
            }
            var cookies: [String: String] = [:]
            for pair in (request.headers[.cookie] ?? "").split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                if parts.count == 2 { cookies[parts[0]] = parts[1] }
            }
            return .json(["cookies": cookies])
        case "cache":
            // Like httpbin's /cache/N: fresh for N seconds.
            let seconds = max(0, Int(segments.dropFirst().first ?? "") ?? 0)
            return .json(echo(request), headers: [.cacheControl: "public, max-age=\(seconds)"])
        default:
            return .status(404)
        }
    }

    private static func echo(_ request: Request) -> Echo {
        var args: [String: String] = [:]
        for item in request.queryItems { args[item.name] = item.value ?? "" }
        var form: [String: String] = [:]
        var note: Note?
        if let body = request.body {
            if request.headers[.contentType] == MediaType.formURLEncoded.rawValue {
                form = formFields(body)
            } else {
                note = try? JSONDecoder().decode(Note.self, from: body)
            }
        }
        return Echo(
            method: request.method.rawValue, url: (try? request.validatedURL().absoluteString) ?? "", args: args,
            headers: headers(of: request), form: form, json: note)
    }

    private static func headers(of request: Request) -> [String: String] {
        var result: [String: String] = [:]
        for field in request.headers { result[field.name.rawValue] = field.value }
        return result
    }

    private static func formFields(_ body: Data) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                $0.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0)
            }
            fields[parts[0]] = parts.count > 1 ? parts[1] : ""
        }
        return fields
    }
}
