import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Random strings through every builder: nothing crashes, and no CR, LF or NUL from input ever
/// reaches the request line or the header block of a request that renders.
@Suite("Fuzz: builders never let input change a request's structure")
struct FuzzTests {
    static let alphabet: [String] = [
        "a", "Z", "0", " ", "\r", "\n", "\r\n", "\0", "\t", "%", "%0D", "%0a", "/", "?", "#", "&", "=", "+", ";", ":",
        "@", "..", ".", "\"", "'", "<", ">", "\\", "{", "}", "é", "😀", "\u{7F}", "\u{1}", "HTTP/1.1", "Host: evil",
        "//evil.test", "\u{2028}", "\u{FEFF}",
    ]

    static func randomString(_ generator: inout RandomSource) -> String {
        let length = Int.random(in: 0...12, using: &generator)
        return (0..<length).map { _ in
            // Mostly harmless characters, so that many chains are valid and get checked.
            Int.random(in: 0..<10, using: &generator) < 7
                ? String("abcXYZ019-_~".randomElement(using: &generator) ?? "a")
                : alphabet.randomElement(using: &generator) ?? ""
        }.joined()
    }

    static func randomBuilder(_ generator: inout RandomSource) -> RequestBuilder {
        let a = randomString(&generator)
        let b = randomString(&generator)
        switch Int.random(in: 0..<18, using: &generator) {
        case 0: return path(a, b)
        case 1: return query(a, b)
        case 2: return query(a, [a, b])
        case 3: return header(HeaderName(rawValue: a), b)
        case 4: return addingHeader("X-Fuzz", a)
        case 5: return bearer(a)
        case 6: return basic(username: a, password: b)
        case 7: return apiKey(a, in: .query(b))
        case 8: return apiKey(a, in: .header(HeaderName(rawValue: b)))
        case 9: return method(HTTPMethod(rawValue: a.isEmpty ? "GET" : a))
        case 10: return userAgent(a)
        case 11: return accept(MediaType(rawValue: a))
        case 12: return form([a: b])
        case 13: return json([a: b])
        case 14: return template("/x/{v}{?q}", ["v": .string(a), "q": .string(b)])
        case 15: return query(percentEncoded: a, b)
        case 16: return multipart([.text(a, b), .data(b, Data(a.utf8), filename: a, contentType: MediaType(rawValue: b))])
        default: return url("https://fuzz.test/" + a)
        }
    }

    /// Checks a request that renders; returns whether it did.
    @discardableResult
    static func assertStructureIntact(_ request: Request, seed: UInt64) -> Bool {
        guard let rendered = try? request.urlRequest() else { return false }
        let target: String = rendered.url?.absoluteString ?? ""
        let host: String = rendered.url?.host ?? ""
        let method: String = rendered.httpMethod ?? ""
        let breaksLine: (Character) -> Bool = { $0 == "\r" || $0 == "\n" || $0 == "\0" }
        let breaksToken: (Character) -> Bool = { breaksLine($0) || $0 == " " }
        let targetIntact = !target.contains(where: breaksToken)
        #expect(targetIntact, "seed \(seed): URL \(target.debugDescription)")
        let hostIntact = host == "api.test" || host == "fuzz.test"
        #expect(hostIntact, "seed \(seed): host \(host)")
        let methodIntact = !method.contains(where: breaksToken)
        #expect(methodIntact, "seed \(seed): method")
        for (name, value) in rendered.allHTTPHeaderFields ?? [:] {
            let nameIntact = !name.contains(where: breaksToken)
            let valueIntact = !value.contains(where: breaksLine)
            #expect(nameIntact, "seed \(seed): header name \(name.debugDescription)")
            #expect(valueIntact, "seed \(seed): header \(name)")
        }
        return true
    }

    @Test(arguments: 0..<40)
    func randomChainsKeepStructure(seed: UInt64) {
        // Seeded, so a failure reproduces.
        var generator = RandomSource.seeded(seed)
        var renderedCount = 0
        for _ in 0..<50 {
            // POST: random chains add bodies, which a GET may not carry.
            var request = Request.post |> baseURL("https://api.test/v1")
            for _ in 0..<Int.random(in: 1...8, using: &generator) {
                request = request |> Self.randomBuilder(&generator)
            }
            if Self.assertStructureIntact(request, seed: seed) { renderedCount += 1 }
            // Descriptions of any request, valid or not, never crash and keep each line whole.
            _ = request.description
        }
        // The generator must produce valid requests too, or the checks above prove nothing.
        #expect(renderedCount >= 5, "seed \(seed): only \(renderedCount) of 50 requests rendered")
    }
}
